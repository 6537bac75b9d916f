/* The backward of the version-2 training examples (v2_train_norms.c and its
 * twins, broken/v2_train_broken.c): the one row loop that Liger-Kernel's
 * RMSNorm backward, Apex's LayerNorm backward, flash-attention's Triton
 * LayerNorm/RMSNorm backward and Gemma's 1 + gamma share, each kernel
 * choosing where it rounds (docs/ops.md, "Backward specs").
 *
 * One row i, from x (the forward's sum under `add`), the saved mean and
 * rstd (rrms), dy and the weight w_j (gamma_j, or 1 + gamma_j):
 *   xhat_j = (x_j - mean) rstd              (RMSNorm: mean = 0), then `xhat`
 *   g_j    = w_j dy_j                       then `dyw`
 *   c1     = sum_j g_j xhat_j / d,  c2 = sum_j g_j / d   (LayerNorm only)
 *   dx_j   = (g_j - (xhat_j c1 + c2)) rstd  (flash-attention's form)
 *            + dresidual_j under `add`, written as dx and as dresidual
 *   dgamma_j += `dw_row`(dy_j xhat_j),  dbeta_j += dy_j
 * every operation in float, sums left to right. The sums over rows are kept
 * in partials of block_rows rows (one program's rows on a GPU), each stored
 * through `partial`, and the partials summed in float: Apex's
 * cuComputePartGradGammaBeta then cuComputeGradGammaBeta, Liger's and
 * flash-attention's per-program _dW rows then _dW.sum(0). block_rows = 0
 * keeps one running sum over every row, each addition through `accumulate`. */
#ifndef NORMCHECK_EXAMPLE_V2_BACKWARD_H
#define NORMCHECK_EXAMPLE_V2_BACKWARD_H

#include <stdlib.h>

#include "v2_common.h"

/* The specs of the training examples; a broken twin declares its original's.
 * The partial's R is one program's rows: R = ceil(N / programs) on a GPU,
 * fixed here so that the spec states it. */
#define V2_SPEC_LIGER_LLAMA_BWD \
  "rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 round=xhat:bf16,dyw:bf16,dw_row:bf16 reduce=block:64:f32"
#define V2_SPEC_APEX_TWO_STAGE_BWD "layernorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 dbeta=bf16 reduce=block:32:f32"
#define V2_SPEC_FUSED_ADD_RMSNORM_BWD "rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 add reduce=block:64:f32"
#define V2_SPEC_GEMMA_BWD "rmsnorm bwd dtype=bf16 gamma=bf16 dgamma=bf16 weight=1+gamma"

typedef float (*v2_round_fn)(float);

static inline float v2_exact(float v) { return v; }

typedef struct {
  int layernorm;            /* 1: LayerNorm (mean subtracted, dbeta), 0: RMSNorm */
  int one_plus_gamma;       /* w = 1 + gamma (Gemma) */
  v2_round_fn statistic;    /* the saved mean and rstd as the kernel reads them */
  v2_round_fn xhat;         /* round=xhat:T */
  v2_round_fn dyw;          /* round=dyw:T */
  v2_round_fn dw_row;       /* round=dw_row:T */
  int64_t block_rows;       /* rows of one partial; 0: one running sum */
  v2_round_fn partial;      /* a partial as stored (reduce=block:R:P) */
  v2_round_fn accumulate;   /* the running sum after each addition (block_rows = 0) */
  int adds_dresidual;       /* under `add`: dx += the residual stream's gradient */
} v2_backward;

/* w_j: gamma_j, or 1 + gamma_j; without gamma, gamma_j is 1 (0 under 1 + gamma). */
static inline float v2_weight(const nc_call* c, const v2_backward* b, int64_t j) {
  if (b->one_plus_gamma) return 1.0f + (c->gamma.data ? v2_get(&c->gamma, 0, j) : 0.0f);
  return v2_gamma(c, j);
}

static inline void v2_run_backward(const nc_call* c, const v2_backward* b) {
  const int64_t d = c->cols;
  float* scratch = (float*)calloc((size_t)(6 * d), sizeof(float));
  if (!scratch) abort();
  float *xhat = scratch, *g = scratch + d, *dgamma = scratch + 2 * d, *dbeta = scratch + 3 * d;
  float *part_gamma = scratch + 4 * d, *part_beta = scratch + 5 * d;
  for (int64_t i = 0; i < c->rows; ++i) {
    const float rstd = b->statistic(v2_get(&c->rstd, i, 0));
    const float mu = b->layernorm ? b->statistic(v2_get(&c->mean, i, 0)) : 0.0f;
    float c1 = 0.0f, c2 = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      xhat[j] = b->xhat((v2_get(&c->x, i, j) - mu) * rstd);
      g[j] = b->dyw(v2_weight(c, b, j) * v2_get(&c->dy, i, j));
      c1 += g[j] * xhat[j];
      c2 += g[j];
    }
    c1 /= (float)d;
    c2 = b->layernorm ? c2 / (float)d : 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      float dx = (g[j] - (xhat[j] * c1 + c2)) * rstd;
      if (c->residual.data && b->adds_dresidual) dx += v2_get(&c->residual, i, j);
      v2_put(&c->dx, i, j, dx);
      if (c->residual_out.data) v2_put(&c->residual_out, i, j, dx);
      const float dy = v2_get(&c->dy, i, j), term = b->dw_row(dy * xhat[j]);
      if (b->block_rows > 0) {
        part_gamma[j] += term;
        part_beta[j] += dy;
      } else {
        dgamma[j] = b->accumulate(dgamma[j] + term);
        dbeta[j] = b->accumulate(dbeta[j] + dy);
      }
    }
    if (b->block_rows > 0 && ((i + 1) % b->block_rows == 0 || i + 1 == c->rows))
      for (int64_t j = 0; j < d; ++j) {
        dgamma[j] += b->partial(part_gamma[j]);
        dbeta[j] += b->partial(part_beta[j]);
        part_gamma[j] = part_beta[j] = 0.0f;
      }
  }
  for (int64_t j = 0; j < d; ++j) {
    if (c->dgamma.data) v2_put(&c->dgamma, 0, j, dgamma[j]);
    if (c->dbeta.data) v2_put(&c->dbeta, 0, j, dbeta[j]);
  }
  free(scratch);
}

#endif /* NORMCHECK_EXAMPLE_V2_BACKWARD_H */
