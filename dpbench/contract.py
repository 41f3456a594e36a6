"""The mechanism contract: small declarative pieces a mechanism registers with, checked before any work starts.

A mechanism declares, in its own ``@register_mechanism(...)`` (see :mod:`dpbench.registry`):

* ``hyper`` — every hyperparameter as a :class:`Hyper` (type, range or allowed values, default, what ``None``
  means) or a :func:`Choice`; ``dpbench run`` validates a config's values against it before the first trial and
  names the field (``mechanisms[0].hyper.sketch``);
* ``privacy_model`` / ``neighbour`` — a string, or a function of the (resolved) hyperparameters, e.g. ``"none"``
  when ``nonprivate: true``; the CSV rows record the value for the instance that ran;
* ``epsilon_range`` — the ε the calibration's theorem covers (a function of the hyperparameters);
* ``bounds`` — the data bounds the calibration relies on (:class:`Bounds`: ‖x_i‖, |y_i|, n ≥ d, ...);
* ``needs`` — extra inputs (``stats``, ``public_X``, ``population``);
* ``audit`` — how the privacy audit runs it (:class:`AuditSetup`: shape, hyperparameters, or why it cannot);
* ``variants`` — named hyperparameter settings (:class:`Variant`), e.g. the literal path of a shortcut.

Example (IHM)::

    @register_mechanism(
        "ihm", summary="...", privacy_model="central", neighbour="zero_out", needs=("stats",), spec="004 §3.3",
        hyper={
            "T": Hyper(int, default=3, ge=1, doc="Newton-sketch iterations"),
            "C": Hyper(float, default=1.0, gt=0, doc="residual clipping level"),
            "rho": Hyper(float, default=None, gt=0, lt=1, none="δ/10", doc="failure probability ϱ"),
            "sketch": Choice("gram", "explicit", default="gram", doc="Wishart shortcut or materialised sketch"),
            ...
        },
        bounds=Bounds(x=1.0, n_ge_d=True),
        variants={"explicit": Variant({"sketch": "explicit"}, literal=True, doc="materialised k×n sketch")},
    )
    def fit(X, y, epsilon, delta, rng, *, stats=None, **hyper):
        T, C = hyper["T"], hyper["C"]
        ...

Each hyperparameter — name, type, range, default, meaning — is written once, in the table; ``fit`` takes them as
``**hyper`` (every one resolved: the registered function fills the defaults) and its signature, as ``help()`` and
IDEs show it, is derived from the table. A quick plug-in may instead take keyword parameters with defaults and no
table (types inferred from the defaults); keyword hyperparameters *and* a table are refused (:func:`declarations`).
Everything here is pure data and validation: no numpy arrays, no randomness.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, NamedTuple


class _Missing:
    def __repr__(self) -> str:
        return "<no default>"


#: a declaration without ``default=`` (refused in a mechanism's table: every hyperparameter has its default there)
MISSING: Any = _Missing()

#: key of a mechanism's info (CSV column ``info.fallback``): 1 when θ̂ is the data-independent release a mechanism
#: falls back to (TukeyEM's failed PTR test, IWR-DP's rejected Hessian: θ̂ = 0), 0 (or absent) otherwise. The
#: report and the leaderboard count it ("fell back in 27 of 30 datasets").
FALLBACK_INFO = "fallback"


class HyperError(ValueError):
    """A hyperparameter value (or name) outside the contract; ``name`` is the hyperparameter, ``reason`` the rest."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason


def _fmt(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class Hyper:
    """One hyperparameter: ``type`` (int, float, bool, str, or object = anything), range, extra literals, None.

    ``gt``/``ge``/``lt``/``le`` bound numbers (open/closed), ``choices`` lists the allowed values, ``also`` extra
    literal values accepted besides the typed ones (e.g. ``"rule"`` for a step size set by a rule), ``none`` says
    what ``None`` means (``None`` is rejected unless it is set). Floats must be finite unless ``inf`` is set;
    a float written as a numeric string (PyYAML reads ``1e-6`` as a string) is converted. ``parse(value, field)``
    (type ``object`` only) validates a structured value — a list of mappings, a selection — and returns it clean or
    raises a ValueError naming the sub-field (``plot.hlines[0].y``); ``shown`` is how :meth:`allowed` says it.
    """

    type: type
    _: KW_ONLY
    default: Any = MISSING
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    choices: tuple[Any, ...] = ()
    also: tuple[Any, ...] = ()
    none: str | None = None
    inf: bool = False
    doc: str = ""
    parse: Callable[[Any, str], Any] | None = None
    shown: str = ""

    def __post_init__(self) -> None:
        if self.type not in (int, float, bool, str, object):
            raise TypeError(f"Hyper type must be int, float, bool, str or object, got {self.type!r}")
        if self.parse is not None and self.type is not object:
            raise TypeError("parse= applies to structured (type object) declarations only")
        if (self.gt is not None or self.ge is not None or self.lt is not None or self.le is not None) and (
            self.type not in (int, float)
        ):
            raise TypeError("gt/ge/lt/le only apply to int and float hyperparameters")

    # -- description ---------------------------------------------------------------------------------------------

    def allowed(self) -> str:
        """What the value may be, in words: ``a number > 0``, ``one of 'gram', 'explicit'``, ..."""
        if self.choices:
            text = "one of " + ", ".join(_fmt(c) for c in self.choices)
        elif self.shown:
            text = self.shown
        else:
            text = {int: "an integer", float: "a number", bool: "true or false", str: "a string", object: "any value"}[
                self.type
            ]
            limits = [f"{sym} {_fmt(v)}" for sym, v in ((">", self.gt), ("≥", self.ge), ("<", self.lt),
                                                          ("≤", self.le)) if v is not None]  # fmt: skip
            if limits:
                text += " " + " and ".join(limits)
        extras = [_fmt(a) for a in self.also] + ([f"None ({self.none})"] if self.none is not None else [])
        if extras:
            text += " or " + " or ".join(extras)
        return text

    def annotation(self) -> str:
        """The type hint of the derived fit signature: ``float | None``, ``str``, ``float | str`` (``also``), ..."""
        names = [self.type.__name__ if self.type is not object else "Any"] + [type(a).__name__ for a in self.also]
        return " | ".join(dict.fromkeys(names + (["None"] if self.none is not None else [])))

    def describe(self, default: Any = MISSING) -> str:
        default = self.default if default is MISSING else default
        shown = "" if default is MISSING else f" (default {_fmt(default)})"
        return self.allowed() + shown + (f" — {self.doc}" if self.doc else "")

    # -- validation ----------------------------------------------------------------------------------------------

    def check(self, value: Any, where: str = "value") -> Any:
        """The value (numeric strings converted to float) if it is allowed; ValueError saying what is allowed.
        ``where`` names the field for a structured value's :attr:`parse` (its errors name the sub-field)."""
        if value is None:
            if self.none is not None:
                return None
            raise ValueError(f"must be {self.allowed()}, got None")
        if self.parse is not None:
            return self.parse(value, where)
        if any(value == a and type(value) is type(a) for a in self.also):
            return value
        clean = self._typed(value)
        if self.choices and not any(clean == c and type(clean) is type(c) for c in self.choices):
            raise ValueError(f"must be {self.allowed()}, got {_fmt(value)}")
        for bound, ok in ((self.gt, lambda v, b: v > b), (self.ge, lambda v, b: v >= b),
                          (self.lt, lambda v, b: v < b), (self.le, lambda v, b: v <= b)):  # fmt: skip
            if bound is not None and not ok(clean, bound):
                raise ValueError(f"must be {self.allowed()}, got {_fmt(value)}")
        return clean

    def _typed(self, value: Any) -> Any:
        wrong = ValueError(f"must be {self.allowed()}, got {_fmt(value)}")
        if self.type is object:
            return value
        if self.type is bool:
            if isinstance(value, bool):
                return value
            raise wrong
        if self.type is str:
            if isinstance(value, str):
                return value
            raise wrong
        if isinstance(value, bool):
            raise wrong
        if self.type is int:
            if isinstance(value, numbers.Integral):
                return value
            raise wrong
        if isinstance(value, str):  # YAML reads 1e-6 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                raise wrong from None
        if not isinstance(value, numbers.Real) or math.isnan(value) or (math.isinf(value) and not self.inf):
            raise wrong
        return value

    @staticmethod
    def infer(default: Any) -> Hyper:
        """A lenient declaration from a signature default (mechanisms registered without ``hyper=``)."""
        if isinstance(default, bool):
            return Hyper(bool, default=default)
        if isinstance(default, numbers.Real):
            return Hyper(float, default=default, inf=True)
        if isinstance(default, str):
            return Hyper(object, default=default)
        return Hyper(object, default=default, none="default")


def Choice(*values: Any, default: Any = MISSING, none: str | None = None, doc: str = "") -> Hyper:  # noqa: N802
    """A hyperparameter taking one of ``values`` (all of one type, e.g. strings)."""
    if not values:
        raise TypeError("Choice needs at least one value")
    kinds = {type(v) for v in values}
    if len(kinds) != 1 or next(iter(kinds)) not in (str, int, float, bool):
        raise TypeError(f"Choice values must share one of the types str, int, float, bool, got {values!r}")
    return Hyper(next(iter(kinds)), default=default, choices=tuple(values), none=none, doc=doc)


class Privacy(NamedTuple):
    """The privacy model (central | local | label | none) and neighbour notion (zero_out | replace_one | none)."""

    model: str
    neighbour: str


@dataclass(frozen=True)
class Bounds:
    """The data bounds a mechanism's calibration relies on (declared, never read off the private data).

    ``x`` (row norm ‖x_i‖, ``x_norm`` = ``l2`` or ``l1``) and ``y`` (|y_i|) are each a number, the name of the
    hyperparameter holding the bound, a function of the resolved hyperparameters, or None (no bound relied on,
    e.g. the mechanism clips residuals). ``clips``: True when the mechanism clips the data to the bounds itself,
    or the name of the bool hyperparameter that switches clipping on (otherwise rows over a bound are rejected).
    ``clipped``: what clipping covers — ``("x", "y")`` (the default), ``("x",)`` when the label bound is assumed
    of the data (the paper's assumption, recorded but neither clipped nor rejected), or a function of the resolved
    hyperparameters giving the axes (the audit feeds records outside the bounds only on the clipped axes).
    ``n_ge_d``: the mechanism needs n ≥ d rows; ``d``: it is only defined for this dimension. ``note``: anything
    a user must know in words (e.g. a bound taken from the generator's population).
    """

    x: float | str | Callable[[Mapping[str, Any]], float | None] | None = None
    y: float | str | Callable[[Mapping[str, Any]], float | None] | None = None
    x_norm: str = "l2"
    clips: bool | str = False
    clipped: tuple[str, ...] | Callable[[Mapping[str, Any]], tuple[str, ...]] = ("x", "y")
    n_ge_d: bool = False
    d: int | None = None
    note: str = ""

    def resolve(self, hyper: Mapping[str, Any]) -> tuple[float | None, float | None]:
        """(x bound, y bound) for the resolved hyperparameters ``hyper``."""
        return _bound(self.x, hyper), _bound(self.y, hyper)

    def hyper_names(self) -> dict[str, str]:
        """{"x": name, "y": name} for the bounds held by a hyperparameter."""
        return {axis: value for axis, value in (("x", self.x), ("y", self.y)) if isinstance(value, str)}

    def clipping(self, hyper: Mapping[str, Any]) -> bool:
        return bool(hyper.get(self.clips)) if isinstance(self.clips, str) else bool(self.clips)

    def clipped_axes(self, hyper: Mapping[str, Any]) -> tuple[str, ...]:
        """The data the mechanism clips for the resolved hyperparameters ``hyper``: a subset of ("x", "y"), empty
        when it does not clip."""
        if not self.clipping(hyper):
            return ()
        axes = tuple(self.clipped(hyper) if callable(self.clipped) else self.clipped)
        if not set(axes) <= {"x", "y"}:
            raise ValueError(f"bounds.clipped must name axes among ('x', 'y'), got {axes!r}")
        return axes

    def enforced(self, hyper: Mapping[str, Any]) -> tuple[bool, bool]:
        """Whether rows over the x / y bound are rejected (a bound is relied on and that axis is not clipped)."""
        x, y = self.resolve(hyper)
        axes = self.clipped_axes(hyper)
        return x is not None and "x" not in axes, y is not None and "y" not in axes


def _bound(value: Any, hyper: Mapping[str, Any]) -> float | None:
    if callable(value):
        value = value(hyper)
    elif isinstance(value, str):
        value = hyper[value]
    return None if value is None else float(value)


#: a label so large that every residual clip saturates (declared audit canaries of mechanisms that clip residuals)
SATURATING_LABEL = 1e6


@dataclass(frozen=True)
class AuditSetup:
    """How ``dpbench audit`` runs the mechanism: dataset shape, hyperparameters, or why it cannot (``skip``).

    ``hyper`` typically states the audit data's bounds for mechanisms that take them as hyperparameters, or picks
    a calibration valid at every audited ε. ``skip`` is the declared reason a mechanism is not audited (the audit
    tests fail for any mechanism that cannot run on the audit data without one).
    """

    n: int = 100
    d: int = 2
    hyper: Mapping[str, Any] = field(default_factory=dict)
    skip: str | None = None
    #: the white-box audit of the declared releases (issue 15, :mod:`dpbench.audit.settings`): ``"pair"`` — fields
    #: of :class:`dpbench.audit.pairs.PairSpec` (n, d, bounds of the canary record, background, canary position);
    #: ``"hyper"`` — hyperparameters added for it (e.g. ``shuffle: false`` so the canary reaches a known stage)
    whitebox: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Variant:
    """A named hyperparameter setting of a mechanism.

    ``literal=True``: the literal (reference) path of a shortcut that is exact in law — same output law as the
    default, slower; ``dpbench bench`` times it next to the default and the tests compare the two in law.
    """

    hyper: Mapping[str, Any]
    doc: str = ""
    literal: bool = False


#: ε the calibration covers when nothing is declared
ANY_EPSILON = (0.0, math.inf)


# ----------------------------------------------------------------------------------------------------------------
# a fit's hyperparameters: from its signature, or declared once (``**hyper``)

#: inputs a mechanism may ask the runner for, besides (X, y, epsilon, delta, rng)
INPUTS = ("stats", "public_X", "population")


def signature_hyperparameters(fit: Callable[..., Any]) -> dict[str, Any]:
    """Keyword-only parameters of ``fit`` other than the runner's inputs, with their defaults."""
    return dict(_signature_defaults(fit))


@functools.lru_cache(maxsize=1024)
def _signature_defaults(fit: Callable[..., Any]) -> tuple[tuple[str, Any], ...]:
    params = inspect.signature(fit).parameters.values()
    return tuple(
        (p.name, p.default) for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in INPUTS
    )


def takes_hyper_mapping(fit: Callable[..., Any]) -> bool:
    """True when ``fit`` takes ``**hyper`` (its hyperparameters declared once, in the ``hyper`` table)."""
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(fit).parameters.values())


#: how a mechanism with a ``hyper=`` table writes its fit (the message of a refused registration)
DECLARE_ONCE = (
    "declare each hyperparameter once: its default in the table (Hyper(..., default=...)) and "
    "def fit(X, y, epsilon, delta, rng, *, <inputs>, **hyper) reading hyper['<name>']; or, for a quick "
    "plug-in, keyword parameters with defaults and no hyper= table (types inferred from the defaults)"
)


def declarations(name: str, fit: Callable[..., Any], hyper: Mapping[str, Hyper]) -> dict[str, Hyper]:
    """The declarations of a ``fit(X, y, epsilon, delta, rng, *, <inputs>, **hyper)``: each hyperparameter's name,
    type, range, default and meaning written once, in ``hyper``; every default allowed by its declaration.

    Raises TypeError (saying how to write it) when ``fit`` also names hyperparameters as keyword parameters — the
    same fact written twice — or declares hyperparameters it cannot receive (no ``**hyper``)."""
    keywords = signature_hyperparameters(fit)
    if keywords:
        raise TypeError(
            f"mechanism {name!r}: fit takes the keyword hyperparameters {sorted(keywords)} and declares "
            f"a hyper= table; {DECLARE_ONCE}"
        )
    if hyper and not takes_hyper_mapping(fit):
        raise TypeError(
            f"mechanism {name!r}: hyperparameters {sorted(hyper)} are declared but fit does not take "
            f"**hyper; {DECLARE_ONCE}"
        )
    for key, spec in hyper.items():
        if spec.default is MISSING:
            raise TypeError(
                f"mechanism {name!r}: hyperparameter {key!r} needs a default in its declaration "
                f"(Hyper(..., default=...))"
            )
        try:
            spec.check(spec.default)
        except ValueError as err:
            raise TypeError(f"mechanism {name!r}: default of {key} is not allowed by its declaration: {err}") from None
    return dict(hyper)


def declared_signature(fit: Callable[..., Any], specs: Mapping[str, Hyper]) -> inspect.Signature:
    """``fit``'s signature with ``**hyper`` spelled out: each declared hyperparameter a keyword-only parameter with
    its default and type (before the runner's inputs), as ``help()``, ``inspect.signature`` and IDEs show it."""
    signature = inspect.signature(fit)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    split = next((i for i, p in enumerate(params) if p.kind is inspect.Parameter.KEYWORD_ONLY), len(params))
    hyper = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=spec.default,
                               annotation=spec.annotation()) for name, spec in specs.items()]  # fmt: skip
    return signature.replace(parameters=params[:split] + hyper + params[split:])


def declared_doc(fit: Callable[..., Any], specs: Mapping[str, Hyper]) -> str:
    """``fit``'s docstring followed by its declared hyperparameters, one line each (what ``help()`` shows)."""
    doc = inspect.cleandoc(fit.__doc__ or "")
    if specs:
        doc += "\n\nHyperparameters (declared once, in the mechanism's table):\n"
        doc += "\n".join(f"    {name} : {spec.describe()}" for name, spec in specs.items())
    return doc.strip()


#: the longest list of names an error message prints whole (longer: it points at ``see``)
LISTED_NAMES_MAX_CHARS = 120


def unknown_name(what: str, name: str, known: Iterable[str], *, of: str = "", see: str = "dpbench list") -> str:
    """``unknown mechanism 'adasp'; did you mean 'adassp'? (`dpbench list mechanisms` shows all 54)``.

    The closest known names (:func:`difflib.get_close_matches`) come first; the full list is printed only when it is
    short (≤ :data:`LISTED_NAMES_MAX_CHARS` characters), otherwise the message points at ``see``."""
    known = sorted(set(known))
    close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.6)
    if not close:  # a misspelt case or a prefix: 'AdaSSP', 'ihm_t'
        close = [k for k in known if k.lower() == str(name).lower() or k.lower().startswith(str(name).lower())][:3]
    message = f"unknown {what} {name!r}{of}"
    if close:
        message += "; did you mean " + " or ".join(repr(c) for c in close) + "?"
    listed = ", ".join(known)
    if not known:
        return message + " (none are allowed)"
    if len(listed) <= LISTED_NAMES_MAX_CHARS:
        return message + f" (allowed: {listed})"
    where = f"`{see}`" if see.startswith("dpbench") else see
    return message + f" ({where} shows all {len(known)})"


# ----------------------------------------------------------------------------------------------------------------
# a registered mechanism's contract, read (the registry's table rows: :data:`dpbench.registry.MECHANISMS`)

PRIVACY_MODELS = ("central", "local", "label", "none")
NEIGHBOURS = ("zero_out", "replace_one", "none")
#: ``privacy:`` profiles (:meth:`MechanismInfo.with_profile`): ``strict`` — every mechanism at the accounting its
#: theorem proves (the leaderboard's and the estimator API's default); ``paper`` — each mechanism's defaults, the
#: papers' own choices (the reproduction configs)
PRIVACY_PROFILES = ("strict", "paper")


PrivacyRule = Callable[[Mapping[str, Any]], str]
EpsilonRange = Callable[[Mapping[str, Any]], tuple[float, float]]


@dataclass(frozen=True)
class MechanismInfo:
    """A registered mechanism and its contract (see :mod:`dpbench.contract` and :func:`register_mechanism`).

    Attributes
    ----------
    name : registry key used in configs.
    fit : ``fit(X, y, epsilon, delta, rng, **inputs, **hyper) -> FitResult | ndarray``: the registered function,
        which validates the hyperparameters and fills the declared defaults (its signature is derived from them).
    summary : one line for ``dpbench list``.
    privacy_model : ``central`` | ``local`` | ``label`` | ``none`` at the default hyperparameters
        (:meth:`privacy` gives it for any hyperparameters).
    neighbour : ``zero_out`` | ``replace_one`` | ``none`` at the default hyperparameters.
    needs : extra inputs the runner passes by keyword (subset of :data:`INPUTS`).
    spec : spec section the implementation follows, e.g. ``"004 §3.3"``.
    style : matplotlib style hints (color, marker, linestyle) used by ``dpbench plot``.
    declared : the hyperparameter declarations, each with its default (None: a quick plug-in, inferred leniently
        from its fit's keyword parameters).
    privacy_rule : (model, neighbour) as a function of the resolved hyperparameters (None: the constants above).
    epsilon_range : (lo, hi], the ε the calibration's theorem covers, or a function of the hyperparameters.
    bounds : the data bounds the calibration relies on.
    audit : the privacy audit's setup (shape, hyperparameters) or the declared reason it is not audited.
    variants : named hyperparameter settings (e.g. the literal path of a shortcut).
    uses_delta : False for pure ε-DP mechanisms (δ is ignored).
    check : cross-field rule on the resolved hyperparameters (raises :class:`~dpbench.contract.HyperError`).
    rows_free : the fit also accepts data without rows: ``X = y = None`` with ``stats`` a
        :class:`~dpbench.linalg.SumStats` (its sufficient statistics; needs ``"stats"`` in ``needs``). The runner
        refuses a rows-free dataset for every other mechanism.
    strict : the hyperparameter values the ``privacy: strict`` profile sets when the user does not (the accounting
        its theorem proves, e.g. LinMix ``strict: True``; :meth:`with_profile`).
    certify : ``certify(resolved hyper) -> (hyperparameter, reason) | None``: why a setting's accounting is not a
        theorem (None: it is); the strict profile refuses such settings.
    intervals : the confidence-interval methods its fit returns in ``FitResult.intervals`` (the first is the
        default of ``DPLinearRegression(intervals=True)``); empty: θ̂ only.
    """

    name: str
    fit: Callable[..., Any]
    summary: str
    privacy_model: str
    neighbour: str
    needs: tuple[str, ...] = ()
    spec: str = ""
    style: Mapping[str, Any] = field(default_factory=dict)
    declared: Mapping[str, Hyper] | None = None
    privacy_rule: Callable[[Mapping[str, Any]], Privacy] | None = None
    epsilon_range: tuple[float, float] | EpsilonRange = ANY_EPSILON
    bounds: Bounds = field(default_factory=Bounds)
    audit: AuditSetup = field(default_factory=AuditSetup)
    variants: Mapping[str, Variant] = field(default_factory=dict)
    uses_delta: bool = True
    check: Callable[[Mapping[str, Any]], None] | None = None
    rows_free: bool = False
    strict: Mapping[str, Any] = field(default_factory=dict)
    certify: Callable[[Mapping[str, Any]], tuple[str, str] | None] | None = None
    intervals: tuple[str, ...] = ()

    def hyperparameters(self) -> dict[str, Any]:
        """The tunable hyperparameters with their defaults: the declarations' (the one place a hyperparameter is
        written), else, for a quick plug-in without a table, the keyword-only parameters of ``fit``."""
        if self.declared is not None:
            return {name: spec.default for name, spec in self.declared.items()}
        return signature_hyperparameters(self.fit)

    def specs(self) -> dict[str, Hyper]:
        """Each hyperparameter's declaration (inferred from its default when the mechanism declared none)."""
        if self.declared is not None:
            return dict(self.declared)
        return {name: Hyper.infer(default) for name, default in self.hyperparameters().items()}

    def check_hyper(self, hyper: Mapping[str, Any], *, cross: bool = True) -> dict[str, Any]:
        """Validate hyperparameter names and values; return them (numeric strings converted).

        Raises :class:`~dpbench.contract.HyperError` naming the first hyperparameter that is unknown or outside
        its declaration, or (``cross``: with the defaults filling the rest) breaks the mechanism's cross-field rule.
        """
        specs = self.specs()
        clean = {}
        for name, value in hyper.items():
            if name not in specs:
                raise HyperError(
                    name,
                    unknown_name(
                        "hyperparameter",
                        name,
                        specs,
                        of=f" of {self.name!r}",
                        see=f"dpbench list mechanisms {self.name}",
                    ),
                )
            try:
                clean[name] = specs[name].check(value)
            except ValueError as err:
                raise HyperError(name, str(err)) from None
        if cross and self.check is not None:
            self.check(self.resolve(clean))
        return clean

    def resolve(self, hyper: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The defaults overridden by ``hyper``."""
        return {**self.hyperparameters(), **(hyper or {})}

    def with_profile(self, hyper: Mapping[str, Any] | None, profile: str) -> dict[str, Any]:
        """The hyperparameters a run under privacy profile ``profile`` uses (:data:`PRIVACY_PROFILES`).

        ``paper``: ``hyper`` as given (each mechanism's defaults: the papers' choices, as in their figures).
        ``strict``: the mechanism's :attr:`strict` values under ``hyper`` (the user's explicit values win), refused
        with a :class:`~dpbench.contract.HyperError` when :attr:`certify` says the resolved accounting is not a
        theorem (e.g. ``linmix`` with ``strict: false``, DP-FTRL's ``paper`` τ under replace-one).
        """
        if profile not in PRIVACY_PROFILES:
            raise ValueError(f"privacy profile must be one of {PRIVACY_PROFILES}, got {profile!r}")
        hyper = dict(hyper or {})
        if profile == "paper":
            return hyper
        merged = {**self.strict, **hyper}
        verdict = None if self.certify is None else self.certify(self.resolve(merged))
        if verdict is not None:
            name, reason = verdict
            raise HyperError(name, f"not allowed under privacy: strict (the accounting its theorem proves): {reason}")
        return merged

    def privacy(self, hyper: Mapping[str, Any] | None = None) -> Privacy:
        """(privacy model, neighbour notion) of the instance with hyperparameters ``hyper``."""
        if self.privacy_rule is None:
            return Privacy(self.privacy_model, self.neighbour)
        return self.privacy_rule(self.resolve(hyper))

    def epsilons(self, hyper: Mapping[str, Any] | None = None) -> tuple[float, float]:
        """(lo, hi]: the ε the calibration covers for hyperparameters ``hyper`` (any ε > 0 when not declared)."""
        rule = self.epsilon_range
        return rule(self.resolve(hyper)) if callable(rule) else tuple(rule)

    @property
    def private(self) -> bool:
        return self.privacy_model != "none"


def _check_strict(info: MechanismInfo) -> None:
    """The strict profile's values are declared hyperparameters, and the accounting they give is certified."""
    unknown = set(info.strict) - set(info.specs())
    if unknown:
        raise ValueError(f"mechanism {info.name!r}: strict sets undeclared hyperparameters {sorted(unknown)}")
    info.check_hyper(info.strict, cross=False)
    verdict = None if info.certify is None else info.certify(info.resolve(info.strict))
    if verdict is not None:
        raise ValueError(f"mechanism {info.name!r}: its strict values are not certified: {verdict[1]}")


def _privacy_of(name: str, model: str | PrivacyRule, neighbour: str | PrivacyRule, hyper: Mapping[str, Any]):
    value = Privacy(model(hyper) if callable(model) else model, neighbour(hyper) if callable(neighbour) else neighbour)
    if value.model not in PRIVACY_MODELS or value.neighbour not in NEIGHBOURS:
        raise ValueError(f"mechanism {name!r}: privacy rule gave {value}, outside {PRIVACY_MODELS} × {NEIGHBOURS}")
    if (value.model == "none") != (value.neighbour == "none"):
        raise ValueError(f"mechanism {name!r}: privacy rule gave {value}; 'none' goes with 'none'")
    return value
