"""The list of supported numpy, generated from the tables that dispatch it.

``burnumba.tracing.dispatch.UFUNCS`` (the ufuncs ``np.f(x)`` reaches through
``__array_ufunc__``), ``dispatch.ACCUMULATE`` (their ``accumulate`` methods that a scan row
computes), ``dispatch.FUNCTIONS`` (the functions ``__array_function__`` reaches),
both filled by ``burnumba.numpy``, and the ndarray methods of ``ArrayVar`` are the truth. The
docs' page of supported numpy is made from ``markdown()`` each time the site is built
(docs/hooks.py); ``python -m burnumba.tools.supported`` prints it.
"""
import textwrap

import numpy as np

from .. import numpy as _numpy  # noqa: F401  (fills the dispatch tables)
from .. import scipy as _scipy
from ..tracing import dispatch
from ..tracing.tracer import supported_methods

def _public_name(func):
    """'mean', 'linalg.norm': the name under numpy's public namespace."""
    module = getattr(func, "__module__", None) or "numpy"
    sub = ".".join(p for p in module.split(".")[1:] if not p.startswith("_"))
    return f"{sub}.{func.__name__}" if sub else func.__name__


def tables():
    """{"ufuncs": [...], "functions": [...], "methods": [...]}: the sorted numpy names that
    traced values support. A ufunc's aliases in numpy's namespace come with it
    (``absolute (abs)``)."""
    ufuncs, refused = [], set()
    for uf, impl in dispatch.UFUNCS.items():
        if getattr(impl, "refused", False):
            refused.add(uf.__name__)
            continue
        aliases = sorted(n for n in dir(np) if n != uf.__name__ and getattr(np, n) is uf)
        ufuncs.append(uf.__name__ + (f" ({', '.join(aliases)})" if aliases else ""))
    # numpy dispatches np.array / np.asarray only with like= (a traced value)
    functions = set()
    for f, impl in dispatch.FUNCTIONS.items():
        if getattr(impl, "refused", False):       # dispatched only to explain the refusal
            refused.add(_public_name(f))
            continue
        functions.add(_public_name(f) + ("(..., like=x)" if f in (np.array, np.asarray)
                                         else ""))
    accumulate = sorted(f"{uf.__name__}.accumulate" for uf in dispatch.ACCUMULATE)
    return {"ufuncs": sorted(ufuncs), "accumulate": accumulate, "functions": sorted(functions),
            "methods": supported_methods(), "refused": sorted(refused),
            "scipy": scipy_functions(), "scipy_ufuncs": sorted(dispatch.SCIPY_UFUNCS)}


def scipy_functions():
    """Every public function of burnumba.scipy, by its scipy name without the "scipy."
    prefix ("special.gammaln", "stats.norm.logpdf"): the keys of the replacements table that
    burnumba.scipy fills (dispatch.SCIPY_REPLACEMENTS)."""
    assert _scipy.special.__name__ == "burnumba.scipy.special"
    return sorted(name[len("scipy."):] for name in dispatch.SCIPY_REPLACEMENTS)


# scipy functions burnumba.scipy does not provide, met in the programs of issue #31, with
# the reason (their error on a traced value names burnumba.scipy and says there is no
# replacement yet)
SCIPY_REFUSED = (
    ("scipy.stats's other distributions",
     "not modules of burnumba.scipy.stats yet: scipy's own module is what the name gives, "
     "and a traced value given to it raises an error naming it"),
    ("the derivative of jn / yn in n and of jv / yv / iv / ive / kv / kve in v; the second "
     "derivative of special.gammainc / gammaincc "
     "in a and of special.betainc / betaincc in a and b (and so of stats.gamma / chi2 / "
     "invgamma / loggamma / beta / t / f / nbinom cdf and sf in their shape)",
     "not defined (nor in autograd): an error names the argument; hold it constant (data, or "
     "bn.stop_gradient)"),
    ("the derivative of stats.binom cdf / sf / logcdf / logsf in n",
     "scipy's binom takes an integer n (NaN at any other): the tails are a step function of "
     "n; an error names it"),
    ("stats.*.rvs, stats.*.fit",
     "sampling and fitting are not traced; draw with a numpy generator inside the function "
     "(its draws are replayed) or call the module function with the parameters"),
    ("the entropy of stats.skewnorm, truncnorm, f, loggamma, the discrete distributions but "
     "bernoulli, multivariate_t, dirichlet and multinomial",
     "no closed form here (scipy integrates or sums numerically): an error names the "
     "module's functions; the others' entropy is the closed form scipy uses, its asymptotic "
     "series included"),
    ("scipy's function reached by a name the code computes (getattr(scipy.special, name)), "
     "or through an object more than one attribute down",
     "scipy's own functions that the traced function reads from its globals, closures or "
     "the scipy modules it names (scipy.stats.norm.logpdf, a frozen norm(mu, sigma), "
     "from scipy.special import logsumexp) are burnumba.scipy's while it is traced; others "
     "raise an error naming the replacement"),
)


def _wrapped(title, names):
    text = f"**{title}** ({len(names)}): " + ", ".join(f"`{n}`" for n in names) + "."
    return textwrap.fill(text, width=100, break_long_words=False, break_on_hyphens=False)


def markdown():
    """The list, as markdown."""
    t = tables()
    parts = [
        _wrapped("ufuncs", t["ufuncs"]) + "\n",
        _wrapped("ufunc methods (a scan row each)", t["accumulate"]) + "\n",
        _wrapped("functions", t["functions"]) + "\n",
        _wrapped("ndarray methods and attributes", t["methods"]) + "\n",
        _wrapped("refused on traced values, with an error that says what to use instead",
                 t["refused"]) + "\n",
        _wrapped("burnumba.scipy (import burnumba.scipy.<area>; scipy's signatures)",
                 t["scipy"]) + "\n",
        _wrapped("scipy.special ufuncs that trace unchanged (scipy.special.gammaln(x) on a "
                 "traced x)", t["scipy_ufuncs"]) + "\n",
        "**scipy functions still refused** (their error says so and names burnumba.scipy):\n",
    ] + [f"- {names}: {why}." for names, why in SCIPY_REFUSED]
    return "\n".join(parts)


if __name__ == "__main__":
    print(markdown())
