// What each source document of the claims is: its title (as published, with
// an English rendering) and what it derives. A claim's `source` names the
// document this way, so a reader can find it without the project's files.
// Macros (string literals), so a claim can append the section by adjacent
// literal concatenation into a static string.
#pragma once

#define NORMCHECK_SOURCE_LN_LINEAR_FOLDING                                                   \
  "blog post \"LayerNorm 层后接 Linear 层的转化形式\" (rewriting LayerNorm followed by a " \
  "Linear layer: folding gamma and beta into the Linear)"
#define NORMCHECK_SOURCE_LN_IMPLEMENTATION                                                       \
  "blog post \"nn.LayerNorm 实现及原理\" (nn.LayerNorm: implementation and principle; a "      \
  "hand-written LayerNorm compared with PyTorch's)"
#define NORMCHECK_SOURCE_ADD_NORM                                                                   \
  "blog post \"对Transformer中Add&Norm层的理解\" (understanding the Transformer's Add & Norm " \
  "layer: which axes LayerNorm, BatchNorm and InstanceNorm normalize)"
#define NORMCHECK_SOURCE_DEEPNET                                                                  \
  "blog post \"Transformer做的千层饼\" (a thousand-layer Transformer), re-deriving DeepNet "     \
  "(Wang et al., arXiv 2203.00555)"
#define NORMCHECK_SOURCE_LN_SOURCE_CODE                                                      \
  "blog post \"Pytorch LayerNorm源码详解\" (PyTorch's LayerNorm source explained: the CPU " \
  "forward rewrite and the backward formulas)"
