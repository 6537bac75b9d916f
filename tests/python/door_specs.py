"""The seed and the spec texts the door's tests share (test_python_door.py,
test_python_domain.py): random cases come from SEED, NORMCHECK_SEED when set,
else normcheck's default."""

import normcheck

SEED = normcheck._normcheck.seed(None)

LAYERNORM = "layernorm fwd stats=none"
LAYERNORM_BF16 = "layernorm fwd dtype=bf16 gamma=bf16 beta=bf16 stats=none"
LLAMA = "rmsnorm fwd dtype=bf16 gamma=bf16 round=xhat:bf16 stats=none"
GEMMA = "rmsnorm fwd dtype=bf16 gamma=bf16 weight=1+gamma stats=none"
RMSNORM = "rmsnorm fwd stats=none"
