"""notebooks/02_specializations.ipynb: why a function compiles again."""

import numpy as np

import olympus
import olympus.numpy as jnp
from notebook_outputs import has_widget, text


def shows(nb, code):
    assert len([c for c in code if has_widget(c)]) == 3  # stepper, inspector, exercise's
    assert "b:f32[16,4]" in text(code[3]) and "shape (2, 4) → (16, 4)" in text(code[3])
    diff = [
        c
        for c in code
        if any("application/vnd.olympus.diff+json" in o.get("data", {}) for o in c.outputs)
    ]
    assert len(diff) == 1


#: Per exercise: a wrong body for its solution region, and what its check must say.
WRONG = {
    "jit_normalize": (
        "return olympus.jit(fun, static_argnums=(1, 2))",
        "it compiles again, because argument 'eps': static value 1e-06 → 1e-05",
    ),
    "as_scale": ("return s", "argument 's': weak type True → False"),
}

#: Other correct answers its checks accept.
RIGHT = [
    ("check_jit_normalize", lambda fun: olympus.jit(fun, static_argnums=2)),
    ("check_jit_normalize", lambda fun: olympus.jit(fun, static_argnames=("axis",))),
    ("check_as_scale", lambda s: np.float32(s)),
    ("check_as_scale", lambda s: float(s)),  # all weak: one program too
]

#: Other wrong answers, and what its checks say of them.
WRONG_ANSWERS = [
    ("check_jit_normalize", lambda fun: olympus.jit(fun), "what must stay static?"),
    ("check_jit_normalize", lambda fun: fun, "not olympus.jit(...)"),
    ("check_as_scale", lambda s: jnp.asarray(s), "dtype float32 → int32"),
    ("check_as_scale", lambda s: np.float32(1.0), "its value must not change"),
]
