# F1-F4 (seed 000 and the centring of SliceGPT/TransformerLens): one claim per
# f*_*.cpp, the 100-digit comparisons they share (fold_exact.cpp, the one
# Boost.Multiprecision unit of the group) and the F1/F2 check (fold_claim.cpp).
set(NORMCHECK_CLAIMS_FOLD_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/fold_exact.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fold_claim.cpp
  ${CMAKE_CURRENT_LIST_DIR}/f1_layernorm_fold.cpp
  ${CMAKE_CURRENT_LIST_DIR}/f2_rmsnorm_fold.cpp
  ${CMAKE_CURRENT_LIST_DIR}/f3_layernorm_as_rmsnorm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/f4_post_ln_residual.cpp)
