# J1-J8 (seed 003: DeepNet arXiv 2203.00555, Xiong et al. 2002.04745): one claim
# per j*_*.cpp, plus the float64 Transformer stack and the model-update
# measurement they share.
set(NORMCHECK_CLAIMS_JACOBIAN_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/transformer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_update.cpp
  ${CMAKE_CURRENT_LIST_DIR}/j1_layernorm_jacobian_norm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/j2_softmax_lemma.cpp
  ${CMAKE_CURRENT_LIST_DIR}/j3_ffn_second_moment.cpp
  ${CMAKE_CURRENT_LIST_DIR}/j4_sublayer_jacobian.cpp
  ${CMAKE_CURRENT_LIST_DIR}/j5_jacobian_product.cpp
  ${CMAKE_CURRENT_LIST_DIR}/j6_update_bound.cpp
  ${CMAKE_CURRENT_LIST_DIR}/j7_deepnorm_update.cpp
  ${CMAKE_CURRENT_LIST_DIR}/j8_xavier_gain.cpp)
