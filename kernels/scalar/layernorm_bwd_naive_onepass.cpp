// Control: LayerNorm backward whose projection mean(g xhat) comes from one-pass
// raw sums, rstd * (mean(g x) - mean * mean(g)), the backward twin of the
// E[x^2] - E[x]^2 forward. It cancels when |mean| >> sigma: the error in that
// projection grows like gamma_d kappa mean|g|, where the two-pass backward's
// grows like u kappa mean|g|. It is held to the two-pass bound, which it meets
// on centred rows and breaks on shifted ones (x = 1e4 + N(0,1)): kept to show
// that the checks catch it. The bound it would need is pytorch_form's. It is
// the two-pass backward's rows with that one change (Projection::raw_sums).
#include "layernorm_bwd_twopass_rows.h"
#include "normcheck/bounds.h"
#include "normcheck/kernel.h"

namespace normcheck {

extern const Kernel kLayerNormBwdNaiveOnepass;
constinit const Kernel kLayerNormBwdNaiveOnepass = scalar::twopass_backward_row<scalar::Projection::raw_sums>(
    "layernorm_bwd.naive_onepass", Origin::control,
    "control: mean(g*xhat) from one-pass raw sums rstd*(mean(g*x) - mean*mean(g)), "
    "then dx = rstd*((g - mean(g)) - xhat*mean(g*xhat)); held to the two-pass bound");

}  // namespace normcheck
