# J1-J8 (seed 003: DeepNet arXiv 2203.00555, Xiong et al. 2002.04745): one claim
# per j*_*.cpp, plus the float64 Transformer stack and the model-update
# measurement they share.
set(NORMCHECK_CLAIMS_JACOBIAN_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/transformer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_update.cpp
  ${CMAKE_CURRENT_LIST_DIR}/j7_deepnorm_update.cpp)
