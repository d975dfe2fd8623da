"""The fuzzer of ``test_fuzz.py`` over the learning, performative, feedback, plotting and widget layers (issue 16).

Every public function (and every class a user constructs) of
:mod:`perfpriv.regression`, :mod:`perfpriv.gradient` (both on
``perfpriv._learning``), :mod:`perfpriv.performative` (all its public
submodules), :mod:`perfpriv.feedback`, :mod:`perfpriv.plots` and
:mod:`perfpriv.widgets` has one typical call in the table below (a test checks
that the table is complete). Each argument in turn is replaced by a typical,
boundary or invalid value of ``test_fuzz``'s pools, and the call must return
with no warning and no NaN, or raise a one-line ``ValueError``/``TypeError``
naming a parameter (``test_fuzz._call_or_clear_error``, with its 60 s hang
guard). Figures are closed after every call (Agg backend, from conftest), and
figure sizes no page can show must be refused.

Every size stays small (at most 100 records, T <= 5, trials <= 2, grids of at
most 3 values) so that the whole file runs in well under 90 s.
"""

import inspect

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_fuzz import POOL, SIZE_POOL, _call_or_clear_error  # noqa: E402

from perfpriv import behaviour, bernoulli, feedback, gaussian, gradient, performative, plots, regression, widgets  # noqa: E402
from perfpriv.engine import Policy  # noqa: E402
from perfpriv.performative import bilevel, federated, participation, prediction, stateful  # noqa: E402

MODULES = (regression, gradient, performative, prediction, federated, bilevel, stateful, participation, feedback,
           plots, widgets)

# ------------------------------------------------------------------ small typical inputs

_rng = np.random.default_rng(0)
X2 = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
Y2 = [1.0, 0.0, 2.0]
XL = _rng.standard_normal((12, 3)).round(3).tolist()          # a small logistic data set
YL = [1.0 if row[0] > 0 else -1.0 for row in XL]
XR, YR, _ = regression.sample_data(20, d=3, x_bound=5.0, y_bound=5.0, seed=1)
PAPER = feedback.family("paper")
MEMORY = feedback.family("memory", 3)
SQUARED = prediction.PerformativeProblem.squared(m=1.0, A=0.5)
CLIENTS = federated.GaussianClients.example(N=4, m_mean=1.0, eps_mean=0.5, m_sd=0.5)
BILEVEL = bilevel.BilevelRegression.synthetic(M=2, n=5, d=2, seed=0)
RIDGE_DATA = regression.RidgeData(d=3, test_size=20)
#: a small table of the learning mechanisms: 50 records and 2 data sets (the defaults, 4000 x 64 for the ridge
#: release and 8000 x 128 for private GD, take seconds a call)
SMALL_TABLE = regression.Tabulation(records=50, datasets=2)
RIDGE = regression.RidgeRelease(0.01, tau=0.02, data=RIDGE_DATA, table=SMALL_TABLE)
#: RidgeRelease's further arguments for the functions that build their own (``mechanism=None`` is in the pool)
RIDGE_OPTIONS = dict(table=SMALL_TABLE)
#: a γ* map of the ridge release (plots.figure_gamma_star_map): two searches over the same cells
_RIDGE_MAP = regression.RidgeRelease([0.001, 0.01], tau=0.02, data=regression.RidgeData(d=2), **RIDGE_OPTIONS)
_RIDGE_CELLS = behaviour.Memoryless(q=np.array([[0.2], [0.6]]), r=np.array([[0.6]]))
PGD_DATA = gradient.GDData(d=3)
PGD = gradient.PrivateGD(1.0, tau=0.02, data=PGD_DATA, steps=3, table=SMALL_TABLE)
PGD_OPTIONS = dict(data=PGD_DATA, steps=3, table=SMALL_TABLE)          # PrivateGD's further arguments

TYP = {
 # --- regression (and perfpriv._learning)
 (regression, "sample_data"): dict(n=20, d=3, x_bound=2.0, y_bound=3.0, noise_sd=1.0, theta=None, seed=0),
 (regression, "ridge_fit"): dict(X=X2, y=Y2, lam=0.5),
 (regression, "leave_one_out"): dict(X=X2, y=Y2, lam=0.1, keep_penalty=False),
 (regression, "ridge_sensitivity"): dict(n=100, lam=0.05, x_bound=5.0, y_bound=5.0),
 (regression, "removal_sensitivity"): dict(n=100, lam=0.05, x_bound=5.0, y_bound=5.0),
 (regression, "worst_case_dataset"): dict(n=100, lam=0.05, x_bound=5.0, y_bound=5.0, grid=3),
 (regression, "sensitivity_profile"): dict(ns=[10], d=2, lam=0.05, x_bound=5.0, y_bound=5.0, noise_sd=1.0,
                                           records=10, seed=0),
 (regression, "gamma_from_rho"): dict(rho=0.5),
 (regression, "rho_from_gamma"): dict(gamma=0.1),
 (regression, "noise_std"): dict(n=100, gamma=0.01, noise="calibrated", lam=0.05, x_bound=5.0, y_bound=5.0),
 (regression, "achieved_rho"): dict(gamma=1.0, n=100, adjacency="replace", noise="sqrt_n", lam=1e-5, x_bound=10.0,
                                    y_bound=10.0),
 (regression, "release_renyi_divergence"): dict(alpha=2.0, shift=0.5, sigma_p=1.0, sigma_q=0.9, d=3),
 (regression, "release"): dict(X=XR, y=YR, gamma=0.01, lam=0.05, x_bound=5.0, y_bound=5.0, noise="calibrated",
                               rng=2),
 (regression, "membership_llr"): dict(shifts=[[1.0, 0.0]], eta=[0.5, 0.0], sigma=1.0, statistic="paper", kappa=None),
 (regression, "leak_probability"): dict(shift_norm=0.5, sigma=0.25, tau=0.5, statistic="paper", kappa=None, d=None),
 (regression, "ols_excess_risk"): dict(n=50, d=3, noise_sd=1.0),
 (regression, "RidgeData"): dict(d=3, x_bound=None, y_bound=None, noise_sd=1.0, theta=None, test_size=20),
 (regression, "Tabulation"): dict(records=50, datasets=2, seed=0),
 (regression, "RidgeRelease"): dict(gamma=0.01, tau=0.02, data=RIDGE_DATA, lam=None, noise=None, statistic=None,
                                    error=None, loo=None, table=SMALL_TABLE),
 (regression, "published_privacy"): dict(gammas=[1.0], tau=0.02, n=50, d=3, y_bound=10.0, records=20, seed=0),
 (regression, "one_round_check"): dict(mechanism=RIDGE, ns=[50], trials=2, seed=0, conventions="paper"),
 # --- gradient
 (gradient, "per_example_gradients"): dict(theta=[0.0, 0.0], X=[[2.0, 0.0]], y=[1.0], loss="logistic"),
 (gradient, "zcdp_cost"): dict(steps=100, clip=1.0, sigma=10.0, adjacency="add_remove"),
 (gradient, "zcdp_to_dp"): dict(rho=1.0, delta=1e-5),
 (gradient, "sigma_for_rho"): dict(rho=0.5, steps=100, clip=1.0),
 (gradient, "objective"): dict(theta=[0.0, 0.0], X=[[1.0, 0.0], [0.0, 1.0]], y=[1.0, -1.0], loss="logistic", lam=1.0),
 (gradient, "minimize_objective"): dict(X=[[1.0, 0.0], [0.0, 1.0]], y=[1.0, 2.0], loss="squared", lam=1.0,
                                        radius=None),
 (gradient, "utility_bound"): dict(n=100, lipschitz=1.0, lam=1.0, radius=1.0, d=5, rho=1.0, steps=100,
                                   strong_convexity=None),
 (gradient, "quadratic_expected_excess"): dict(X=X2, y=Y2, training=gradient.Training(
     loss="squared", lam=1.0, clip=1.0, steps=3, step_size=0.5), sigma=0.5, theta0=None),
 (gradient, "gdp_leak_probability"): dict(mu=2.0, tau=0.5),
 (gradient, "Training"): dict(loss="logistic", lam=1.0, clip=1.0, steps=5, schedule="constant", step_size=0.02,
                              radius=None, strong_convexity=None),
 (gradient, "noisy_gd"): dict(X=XL, y=YL, training=gradient.Training(loss="logistic", lam=1.0, clip=1.0, steps=5,
                                                                     step_size=0.02), sigma=None, rho=1.0,
                              theta0=None, seed=1),
 (gradient, "simulate_transcripts"): dict(X=XL, y=YL, training=gradient.Training(
     loss="logistic", lam=1.0, clip=0.05, steps=3, step_size=0.1), index=0, runs=4, rho=1.0, seed=0),
 (gradient, "GDData"): dict(d=3, x_bound=4.0, theta_norm=2.0, noise_sd=1.0),
 (gradient, "Tabulation"): dict(records=50, datasets=2, seed=0),
 (gradient, "PrivateGD"): dict(rho=1.0, tau=0.02, data=PGD_DATA, loss="logistic", lam=1.0, clip=2.0, steps=3,
                               step_size=2.0, step_offset=5.0, table=SMALL_TABLE),
 (gradient, "UtilityData"): dict(n=20, d=3, x_bound=2.0, noise_sd=0.5),
 (gradient, "utility_check"): dict(rhos=[1.0, 100.0], data=gradient.UtilityData(n=20, d=3), loss="squared", lam=1.0,
                                   steps=5, runs=2, radius=None, seed=0),
 (gradient, "long_run_utility"): dict(mechanism=gradient.PrivateGD([0.1, 1.0, np.inf], tau=0.02, **PGD_OPTIONS),
                                      users=behaviour.Memoryless(q=0.0, r=0.0), T=3, n0=50, trials=0,
                                      policy=Policy(cap=200), seed=None),
 (gradient, "one_round_check"): dict(mechanism=PGD, ns=[50], trials=2, seed=0, conventions="paper"),
 # --- performative
 (prediction, "PerformativeProblem"): dict(H=[[1.0]], B=[[1.0]], C=[[1.0]], m=[1.0], A=[[0.5]], Sigma=[[1.0]]),
 (prediction, "repeated_risk_minimization"): dict(problem=SQUARED, theta0=[0.0], T=3, samples=None, trials=1,
                                                  seed=None),
 (prediction, "repeated_gradient_descent"): dict(problem=SQUARED, theta0=[0.0], T=2, step=1.0, samples=10, trials=2,
                                                 seed=0),
 (federated, "GaussianClients"): dict(m=[1.0, 3.0], eps=[0.5, 0.5], p=[0.5, 0.5], sigma=1.0),
 (federated, "StepRule"): dict(beta=2.0, offset=4.0, kind="decaying"),
 (federated, "stable_point"): dict(m=[1.0, 3.0], eps=[0.5, 0.5], p=None),
 (federated, "average_sensitivity"): dict(eps=[0.5, 1.5], p=[0.75, 0.25]),
 (federated, "FedAvg"): dict(E=2, scheme="full", K=None, steps=None, batch=1, scaled=False),
 (federated, "p_fedavg"): dict(clients=CLIENTS, fedavg=federated.FedAvg(E=2), T=5, theta0=0.0, trials=2, seed=1),
 (federated, "expected_distance"): dict(clients=CLIENTS, fedavg=federated.FedAvg(steps=1.0), T=2, theta0=0.0),
 (bilevel, "BilevelRegression"): dict(A=BILEVEL.A.tolist(), b=BILEVEL.b.tolist(), C=BILEVEL.C.tolist(),
                                      dd=BILEVEL.dd.tolist(), eps_c=0.5, eps_d=0.5, lam_x=1e-3, lam_y=1e-3, p=None),
 (bilevel, "fbi_rrm"): dict(problem=BILEVEL, x0=None, rounds=5),
 (stateful, "level_response"): dict(mechanism=bernoulli.RandomizedResponse([0.3, 1.0, 3.0]),
                                    behaviour=behaviour.Memoryless(q=0.3, r=0.6), T=5, n0=100, cap=20000, floor=1,
                                    conventions="paper"),
 (participation, "StatefulMechanism"): dict(),
 (participation, "ClientLaw"): dict(m=1.0, m_sd=1.0, eps=0.5, eps_sd=0.0, sigma=1.0),
 (participation, "PrivateFederatedRound"): dict(gamma=1.0, tau=0.5, R=20.0, clients=participation.ClientLaw(),
                                                fedavg=federated.FedAvg(E=1, steps=0.5, batch=1), theta0=0.0, d=1,
                                                statistic=None),
 (feedback, "Family"): dict(name="memory", parameter=3, rule="leak"),
 (feedback, "family"): dict(name="memory", parameter=3, rule="leak"),
 (feedback, "two_classes"): dict(q=0.3, spread=0.5),
 (feedback, "critical_epsilon"): dict(users=MEMORY, q=0.3, r=0.6),
 (feedback, "threshold_table"): dict(users=MEMORY, q=[0.3], r=[0.6], gaussian_users=None, tau=0.02, n=20, d=2,
                                     R=10.0, statistic="paper"),
 (feedback, "trajectories"): dict(users=feedback.family("contagion", 1.0),
                                  mechanism=bernoulli.RandomizedResponse([0.5]), q=0.2, r=0.6, T=3, n0=20, trials=2,
                                  policy=Policy(cap=None, floor=0), seed=1),
 (feedback, "epsilon_map"): dict(users=MEMORY, mechanism=bernoulli.RandomizedResponse([0.5, 2.0], mu=(0.5, 1.0)),
                                 qs=[0.3], rs=[0.6], T=5, n0=50, trials=2, policy=Policy(cap=200), seed=0,
                                 options=None),
 (feedback, "gamma_map"): dict(users=MEMORY, mechanism=gaussian.GaussianMean([1.0, 3.0], tau=0.02, d=2, R=10.0),
                               qs=[0.3], rs=[0.6], T=2, n0=20, trials=2, policy=Policy(cap=200), seed=0, options=None),
 (feedback, "threshold_curve"): dict(name="contagion", values=[0.0, 1.0, 2.0], q=0.2, r=0.6, rule="leak"),
 (feedback, "compare_gaussian"): dict(users=MEMORY, mechanism=gaussian.GaussianMean([1.0, 3.0], tau=0.02, d=2, R=10.0),
                                      q=0.3, r=0.6, T=2, n0=20, trials=2, policy=Policy(cap=200), seed=0),
}
_MAPS = [feedback.epsilon_map(**dict(TYP[(feedback, "epsilon_map")], users=u)) for u in (PAPER, MEMORY)]
_GMAPS = [feedback.gamma_map(**dict(TYP[(feedback, "gamma_map")], users=u)) for u in (PAPER, MEMORY)]
#: summary's typical call; it is not in TYP: its ratios are NaN where no cell has a finite optimum (see below)
SUMMARY = dict(bernoulli_maps=_MAPS, gaussian_maps=_GMAPS)

#: Frozen result dataclasses that the library builds and users never construct (nothing to fuzz).
EXEMPT = {
    (regression, "WorstCase"), (regression, "SensitivityProfile"),
    (regression, "PublishedPrivacy"), (regression, "OneRoundCheck"),
    (gradient, "GDRun"), (gradient, "TranscriptCheck"), (gradient, "UtilityCheck"), (gradient, "LongRunUtility"),
    (gradient, "OneRoundCheck"),
    (feedback, "ThresholdTable"), (feedback, "Trajectories"), (feedback, "FeedbackMap"), (feedback, "Summary"),
    (feedback, "GaussianComparison"),
    (prediction, "PerformativePath"), (federated, "FedAvgRun"), (federated, "FedAvgMoments"),
    (bilevel, "BilevelPath"), (stateful, "LevelResponse"),
}

SIZES = {"n", "n0", "T", "trials", "d", "grid", "records", "datasets", "steps", "runs", "test_size", "rounds",
         "samples", "E", "K", "batch", "index", "nrows", "ncols", "bins", "last", "k", "N", "M", "columns", "max_bytes",
         "colors"}


#: The largest value of a size in the pool: at most 100 records, but short horizons and few trials
#: (a 100-round agent simulation takes minutes) -- the file's time budget.
SIZE_CAP = {"T": 5, "trials": 2, "runs": 2, "d": 12, "rounds": 5, "E": 5,
            "samples": 20, "grid": 3, "steps": 20}


def _size_pool(param):
    cap = SIZE_CAP.get(param)
    return SIZE_POOL if cap is None else [v for v in SIZE_POOL if v != 100] + [cap]


def _public(mod):
    return {n for n in mod.__all__ if inspect.isfunction(getattr(mod, n)) or inspect.isclass(getattr(mod, n))}


def _call(func, kwargs, param):
    try:
        return _call_or_clear_error(func, kwargs, param)
    finally:
        plt.close("all")


# ------------------------------------------------------------------ plots and widgets
# Figures are sampled, not swept: one figure costs 0.1-1 s to draw, so the whole pool over every argument
# of every figure would take minutes. The typical calls (all drawn by the completeness test) use the
# smallest results their chapters' functions give.

from matplotlib.figure import Figure  # noqa: E402

from perfpriv import engine, experiments, optimize  # noqa: E402


def _figure():
    fig = Figure(figsize=(4.2, 3.2))
    ax = fig.add_subplot()
    ax.plot([1.0, 2.0], [1.0, 3.0])
    return fig


FIG = _figure()
AX = FIG.axes[0]
_G = gaussian.simulate(1.0, tau=0.05, q=0.5, r=0.2, T=3, n0=20, d=3, R=10.0, trials=2, seed=0)
_TRAJ = feedback.trajectories(MEMORY, bernoulli.RandomizedResponse([0.3, np.inf]), q=0.3, r=0.6, T=3, n0=20, trials=2,
                              seed=4)
_EMAP = _MAPS
_SQ_PATH = prediction.repeated_risk_minimization(SQUARED, [0.0], T=3)
_MOMENTS = federated.expected_distance(CLIENTS, T=5)
_RUN = federated.p_fedavg(CLIENTS, T=5, trials=2, seed=3)
_BIL = bilevel.BilevelRegression.synthetic(M=2, n=5, d=2, eps_c=0.5, eps_d=3.0, lam_x=1.0, lam_y=1.0, seed=0)
_PART = engine.simulate(participation.PrivateFederatedRound([0.5, 2.0], tau=0.3, R=10.0),
                        behaviour.Memoryless(q=0.5, r=0.2), T=3, n0=20, policy=Policy(cap=60), trials=2, seed=1)
_LEVELS = stateful.level_response(gaussian.GaussianMean([0.1, 1.0, 10.0], tau=0.02, d=3, R=10.0),
                                  behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=50)
_GD = gradient.noisy_gd(XL, YL, gradient.Training(loss="logistic", lam=1.0, clip=2.0, steps=3, step_size=0.1), rho=1.0,
                        seed=1)
_TRANSCRIPTS = [gradient.simulate_transcripts(XL, YL, gradient.Training(loss="logistic", lam=1.0, clip=c, steps=3,
                                                                        step_size=0.1), index=0, runs=4, rho=0.1, seed=2)
                for c in (0.05, 2.0)]
_SCHED = optimize.optimal_schedule(gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0),
                                   behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=50,
                                   search=dict(starts="constant", polish=0))
_CMP = experiments.compare_schedules({"constant": np.full(3, 0.7), "no privacy": np.full(3, 1e-3)},
                                     gaussian.GaussianMean(tau=0.02, d=3, R=10.0), behaviour.Memoryless(q=0.5, r=0.4),
                                     n0=20, trials=2, seed=7)
#: the results the survival and horizon figures draw (they take only a result): Figs. 3b-3c's two panels
#: (small q, large q; seeds 0 and 1), the mean-field paths and the theory-only horizon curves
_GROWTH = tuple(experiments.growth_curves(gaussian.GaussianMean([0.5, 5.0], tau=0.02, d=3, R=10.0),
                                          behaviour.Memoryless(q=q, r=r), n0=20, T=1, trials=2, ratio="first",
                                          policy=Policy(cap=200), seed=k)
                for k, (q, r) in enumerate(((0.11, 0.52), (0.45, 0.11))))
_PATHS = experiments.mean_field_paths(gaussian.GaussianMean(2.0, tau=0.02, d=3, R=10.0),
                                      behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=50, policy=Policy(cap=200),
                                      trials=2, seed=0, sizes=[10, 100])
_HORIZON = experiments.horizon_curves(gaussian.GaussianMean([0.5, 5.0], tau=0.02, d=3, R=10.0),
                                      behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=50, policy=Policy(cap=200),
                                      trials=2, seed=0, empirical=False)
#: what the Gaussian figures of chapters 03-04 draw (they take only a result since issue 31): a run over two noise
#: scales and Fig. 3a's leak fractions
_RUNS = gaussian.simulate([0.5, 2.0], tau=0.05, q=0.5, r=0.2, T=3, n0=20, d=3, R=10.0, trials=2, seed=0)
_LEAKS = experiments.figure3a_simulation(gaussian.GaussianMean([0.5, 5.0], tau=0.05, d=3, R=10.0), 100, [0.05, 0.5],
                                         rounds=2, seed=0)
#: the model an explorer of Algorithm 1 starts from
_MIA = dict(mechanism=gaussian.GaussianMean(2.0, tau=0.05, d=3, R=10.0), users=behaviour.Memoryless(q=0.5, r=0.2))


#: what the Bernoulli figures draw (they take only a result since issue 31): the runs of Figs. 1 and 6 (one row),
#: the epsilon* maps of Figs. 2 and 7 (a 2 x 2 grid of (q, r)) and a final-error curve
_RR = bernoulli.RandomizedResponse([1.0, np.inf])
_CURVES = {rule: experiments.curve_runs(_RR, [behaviour.Memoryless(q=0.6, r=0.3, rule=rule)], T=3, n0=20, trials=2,
                                        policy=Policy(cap=200), seed=0) for rule in ("leak", "agnostic")}
_QR = np.meshgrid([0.2, 0.8], [0.2, 0.8], indexing="ij")
_EPS_MAPS = {rule: optimize.optimal_epsilon(bernoulli.RandomizedResponse([0.5, np.inf], mu=(0.5, 1.0)),
                                            behaviour.Memoryless(q=_QR[0], r=_QR[1], rule=rule), T=3, n0=20, trials=2,
                                            seed=0) for rule in ("leak", "agnostic")}
_FINAL = experiments.final_error_curve(_RR, behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=20, trials=2,
                                       policy=Policy(cap=200), seed=0)


class _GainMap:
    """The fields of an experiments.GainMap that the figure reads (a real one costs seconds)."""
    qs = np.array([0.1, 0.5])
    rs = np.array([0.2, 0.6])
    gain = np.array([[0.0, 0.1], [0.2, 0.4]])
    T, tau = 3, 0.02


def _draw(**values):
    return _figure()


PLOT_TYP = {
 (plots, "new_figure"): dict(nrows=1, ncols=2, width=4.2, height=3.2),
 (plots, "show"): dict(fig=FIG, check_layout=False),
 (plots, "style"): dict(),
 (plots, "png_bytes"): dict(fig=FIG, density=1, colors=16),
 (plots, "display_width"): dict(fig=FIG),
 (plots, "layout_problems"): dict(fig=FIG, tolerance=1.0),
 (plots, "plain_log"): dict(ax=AX, x=True, y=False),
 (plots, "math"): dict(expr=r"\gamma"),
 (plots, "number"): dict(value=2.5e-7, fmt=".3g"),
 (plots, "assign"): dict(name="n0", value=400, fmt=".3g"),
 (plots, "params"): dict(fmt=".3g", q=0.3, r=0.6),
 (plots, "html"): dict(expr=r"\gamma_c", unicode_scripts=False),
 (plots, "figure1"): dict(results=_CURVES["leak"], window=2),
 (plots, "figure2"): dict(result=_EPS_MAPS["leak"], thresholds=True),
 (plots, "figure6"): dict(results=_CURVES["agnostic"], window=2),
 (plots, "figure7"): dict(result=_EPS_MAPS["agnostic"], thresholds=True),
 (plots, "growth_factor_figure"): dict(settings=((0.6, 0.3),), rules=("leak",), epsilon_range=(0.01, 20.0)),
 (plots, "final_error_figure"): dict(results=[_FINAL]),
 (plots, "epsilon_star_map"): dict(result=optimize.optimal_epsilon(
                                       bernoulli.RandomizedResponse([0.5, np.inf], mu=(0.5, 1.0)),
                                       behaviour.Memoryless(q=[[0.2], [0.8]], r=[[0.5]]), T=3, n0=20, trials=2, seed=0),
                                   q=[0.2, 0.8], r=[0.5], ax=None, rule="leak", thresholds=True, colorbar=True,
                                   title=None),
 (plots, "clipping_figure"): dict(Z=_rng.normal(0, 2, (20, 2)).tolist(), R=2.0),
 (plots, "algorithm1_runs"): dict(run=_RUNS),
 (plots, "population_error"): dict(run=_G, gamma=1.0, d=3, Sigma=None, title=None, fig_axes=None, color="C0",
                                   label=None, trial_lines=True, level=None),
 (plots, "llr_histogram"): dict(samples=_rng.normal(0.5, 1, (50, 2)), s=[2.0, 3.0], n=100, gamma=1.0, labels=None,
                                bins=10),
 (plots, "tail_bounds_figure"): dict(s=3.0, n=100, gamma=1.0, taus=None, alphas=(2.0,), samples=None),
 (plots, "figure3a"): dict(simulated=_LEAKS),
 (plots, "roc_figure"): dict(mus=[0.5, 1.0], empirical=None, labels=None, fpr=None),
 (plots, "outlier_figure"): dict(s=_rng.gamma(3, 1, 50), leaked=_rng.random(50) < 0.3, n=100, gamma=1.0, tau=0.3,
                                 bins=5, statistic="paper", d=None),
 (plots, "statistic_figure"): dict(gammas=[0.3, 1.0, 10.0], n=100, tau=0.02, d=3, R=10.0, populations=None,
                                   run_gamma=None, q=None, r=None),
 (plots, "exact_floor_figure"): dict(check=None, ns=(20, 100), tau=0.02, d=3, R=10.0, gammas=[0.5, 5.0],
                                     taus=(0.02,)),
 (plots, "conventions_figure"): dict(runs={"paper": _G}, gamma=1.0, d=3, Sigma=None, title=None, level=None),
 (plots, "llr_law_figure"): dict(s=3.5, n=100, gamma=1.0, tau=0.3, taus=None),
 (plots, "figure3bc"): dict(curves=_GROWTH),
 (plots, "figure_theorem3"): dict(checks=[experiments.theorem3_check(
     gaussian.GaussianMean(2.0, tau=0.02, d=12, R=10.0), behaviour.Memoryless(q=0.3, r=0.6), sizes=(2, 20),
     trials=2)] * 3),
 (plots, "figure_leak_dispersion"): dict(results=[experiments.leak_dispersion(2.0, tau=0.02, n=20, trials=3)] * 2),
 (plots, "figure_mean_field"): dict(paths=_PATHS),
 (plots, "figure_horizon"): dict(curves=_HORIZON),
 (plots, "figure_gamma_star"): dict(maps=[experiments.gamma_star_map(
                                        gaussian.GaussianMean(tau=0.02, d=12, R=10.0),
                                        behaviour.Memoryless(q=[[0.1], [0.5]], r=[[0.2, 0.6]]), T=3,
                                        maps=experiments.THEORY_MAPS)], q_line=None, theory="bound"),
 (plots, "finish_horizon_axes"): dict(ax=AX, gamma_c=2.0, q=0.3, r=0.6, tau=0.02, T=3, n0=50),
 (plots, "figure_schedules"): dict(results={"optimal": _SCHED}, title="test"),
 (plots, "figure_schedule_comparison"): dict(comparison=_CMP, title="test", z=1.96, exclude=("no privacy",)),
 (plots, "figure_gain_map"): dict(maps=[_GainMap()], titles=None),
 (plots, "figure_effective_q"): dict(trajectories=[_TRAJ], title=None),
 (plots, "figure_feedback_paths"): dict(trajectories=_TRAJ, title=None, z=2.0),
 (plots, "figure_thresholds"): dict(curves={"memory": (MEMORY, [1, 2, 3], feedback.threshold_curve(
     "memory", [1, 2, 3], q=0.3, r=0.6))}, paper=bernoulli.critical_epsilon(q=0.3, r=0.6), title=None),
 (plots, "figure_feedback_maps"): dict(maps=_EMAP, title="maps"),
 (plots, "family_label"): dict(family=MEMORY),
 (plots, "figure_ridge_sensitivity"): dict(profile=regression.sensitivity_profile(
     [10, 50], d=2, lam=0.05, x_bound=5.0, y_bound=5.0, records=20, seed=1), title=None),
 (plots, "figure_one_round"): dict(check=regression.one_round_check(RIDGE, [16, 32], trials=2, seed=2),
                                   symbol=r"\gamma", title=None),
 (plots, "figure_gamma_star_map"): dict(
     simulated=optimize.level_search(_RIDGE_MAP, _RIDGE_CELLS, T=2, n0=20, trials=2, seed=3,
                                     policy=Policy(cap=200)),
     theory=optimize.level_search(_RIDGE_MAP, _RIDGE_CELLS, T=2, n0=20, method="mean_field",
                                  policy=Policy(cap=200)),
     q=[0.2, 0.6], r=[0.6], title=None),
 (plots, "figure_published_privacy"): dict(result=regression.published_privacy(
     [0.2, 20.0], tau=0.02, n=50, d=2, records=20, seed=4), title=None),
 (plots, "figure_gd_utility"): dict(checks=[gradient.utility_check([2.0, 20.0], gradient.UtilityData(n=20, d=2),
                                                                   loss="squared", steps=3, runs=2, seed=5)],
                                    title=None),
 (plots, "figure_individual_privacy"): dict(run=_GD, tau=0.02, title=None),
 (plots, "figure_transcript_checks"): dict(checks=_TRANSCRIPTS, labels=["clipped", "driven"], tau=0.02, title=None),
 (plots, "figure_long_run_utility"): dict(result=gradient.long_run_utility(
     gradient.PrivateGD([0.1, np.inf], tau=0.02, **PGD_OPTIONS), behaviour.Memoryless(q=0.0, r=0.0), T=2, n0=20,
     trials=2, policy=Policy(cap=200), seed=6), title=None),
 (plots, "figure_retraining"): dict(paths={"RRM": _SQ_PATH}, problem=SQUARED, title=None),
 (plots, "figure_level_response"): dict(response=_LEVELS, deployed=[1], title=None),
 (plots, "figure_fedavg_convergence"): dict(moments={"full": _MOMENTS}, runs={"full": _RUN}, rate_line=True,
                                            title=None),
 (plots, "figure_fedavg_factors"): dict(panels={"spread": ([0, 2], {"data": [1.0, 2.0]})}, title=None),
 (plots, "figure_bilevel"): dict(paths={"mixed": bilevel.fbi_rrm(_BIL, rounds=5)}, problem=_BIL,
                                 eps_c=np.linspace(0, 2, 3), eps_d=np.linspace(0, 6, 3), title=None),
 (plots, "figure_participation"): dict(runs={"run": _PART}, show=None, paths_of=None, last=2, theory=True,
                                       title=None),
 (widgets, "Explorer"): dict(title="t", controls={"q": widgets.float_slider("q", 0.3, 0.0, 1.0, 0.1)}, draw=_draw,
                             columns=3, source=None, static_grid=None),
 (widgets, "StaticExplorer"): dict(title="t", controls={"q": widgets.grid("q", [0.3, 0.6])}, draw=_draw, fixed=None,
                                   fixed_labels=None, fixed_labels_html=False, source=None, max_bytes=10**6,
                                   colors=16),
 (widgets, "Grid"): dict(label="q", values=(0.3, 0.6), default=0, fmt=".3g", html=False),
 (widgets, "grid"): dict(label="q", values=[0.3, 0.6], default=None, fmt=".3g", html=False),
 (widgets, "checkbox"): dict(description="no privacy", value=False),
 (widgets, "float_slider"): dict(description="q", value=0.3, low=0.0, high=1.0, step=0.1),
 (widgets, "int_slider"): dict(description="T", value=3, low=1, high=5, step=1),
 (widgets, "label_html"): dict(text=r"budget $\varepsilon$"),
 (widgets, "log_slider"): dict(description="gamma", value=1.0, low=0.1, high=10.0),
 (widgets, "bernoulli_explorer"): dict(rule="leak", epsilon=None, q=None, r=None, T=10, n0=20, trials=2, seed=0),
 (widgets, "bernoulli_draw"): dict(epsilon=1.0, no_privacy=False, q=0.3, r=0.6, T=3, n0=20, trials=2, rule="leak",
                                   seed=0, window=2),
 (widgets, "mia_explorer"): dict(**_MIA, n0=20, T=3, trials=2, policy=Policy(cap=200), seed=0),
 (widgets, "mia_draw"): dict(**_MIA, n0=20, T=3, trials=2, policy=Policy(cap=200), seed=0),
 (widgets, "llr_explorer"): dict(gamma=1.0, n=100, tau=0.3, s=3.5),
 (widgets, "survival_explorer"): dict(),
 (widgets, "horizon_explorer"): dict(),
 (widgets, "draw_survival"): dict(gamma=3.0, tau=0.02, q=0.3, r=0.6, n0=50, T=3, d=3, R=10.0, cap=200),
 (widgets, "draw_horizon"): dict(q=0.3, r=0.6, tau=0.02, T=3, n0=50, d=3, R=10.0, cap=200),
 (widgets, "schedule_explorer"): dict(),
 (widgets, "draw_schedule"): dict(q=0.3, r=0.6, tau=0.02, T=3, n0=50, d=3, R=10.0, cap=200),
 (widgets, "feedback_explorer"): dict(),
 (widgets, "draw_feedback"): dict(users=MEMORY, mechanism=gaussian.GaussianMean(tau=0.02, d=3, R=10.0), q=0.3, r=0.6,
                                  T=3, n0=20, trials=2, policy=Policy(cap=200), seed=0),
 (widgets, "learning_explorer"): dict(),
 (widgets, "draw_learning"): dict(q=0.5, r=0.5, gamma=0.0056, T=3, tau=0.02, n0=20, cap=200),
 (widgets, "participation_explorer"): dict(),
 (widgets, "draw_participation"): dict(mechanism=participation.PrivateFederatedRound(
     0.6, tau=0.3, R=10.0, clients=participation.ClientLaw(m=2.0, m_sd=1.0, eps=0.8, eps_sd=0.3),
     fedavg=federated.FedAvg(steps=0.5)), users=behaviour.Memoryless(q=0.5, r=0.2),
     T=3, n0=20, trials=2, policy=Policy(cap=60), seed=1),
}


#: Plot and widget functions whose arguments are checked up front (issue 16, second pass): the chapters'
#: figures of the learning, performative and feedback layers, and the shared helpers and controls.
CHECKED = {
    "new_figure", "show", "style", "png_bytes", "display_width", "layout_problems", "plain_log", "math", "number",
    "assign", "params", "html", "family_label", "figure_effective_q", "figure_feedback_paths", "figure_thresholds",
    "figure_feedback_maps", "figure_ridge_sensitivity", "figure_one_round", "figure_gamma_star_map",
    "figure_published_privacy", "figure_gd_utility", "figure_individual_privacy", "figure_transcript_checks",
    "figure_long_run_utility", "figure_retraining", "figure_level_response", "figure_fedavg_convergence",
    "figure_fedavg_factors", "figure_bilevel", "figure_participation", "checkbox", "float_slider", "int_slider",
    "log_slider", "label_html",
    # third pass (the plots and widgets layer): the model-layer figures and the explorers' building blocks
    "Grid", "grid", "Explorer", "StaticExplorer", "clipping_figure", "population_error", "conventions_figure",
    "llr_histogram", "tail_bounds_figure", "llr_law_figure", "roc_figure", "outlier_figure", "statistic_figure",
    "growth_factor_figure", "epsilon_star_map", "figure_theorem3", "figure_leak_dispersion", "figure_gamma_star",
    "finish_horizon_axes", "figure_schedules", "figure_schedule_comparison", "figure_gain_map",
    "bernoulli_explorer", "bernoulli_draw", "mia_explorer", "mia_draw", "llr_explorer", "draw_survival",
    "draw_horizon", "survival_explorer", "horizon_explorer", "schedule_explorer", "feedback_explorer",
    "draw_feedback", "learning_explorer", "draw_learning", "participation_explorer", "draw_participation",
    # fourth pass: the figures that run a whole experiment of the model layers (seconds a call at the book's
    # sizes), checked up front where they receive their arguments, and the schedule explorer's figure
    # (figure3bc, figure_mean_field, figure_horizon, figure3a and algorithm1_runs take only a result since issue 31)
    "figure1", "figure2", "figure6", "figure7", "final_error_figure", "figure3a", "algorithm1_runs",
    "exact_floor_figure", "figure3bc", "figure_mean_field", "figure_horizon", "draw_schedule",
}
#: Cheap enough to sweep exhaustively: no figure drawn, or one built (not rendered) in milliseconds -- a whole
#: sweep of each of the figures here took at most 1.5 s on the 2-core machine (the others are sampled below).
HELPERS = {"new_figure", "style", "display_width", "plain_log", "math", "number", "assign", "params", "html",
           "family_label", "checkbox", "float_slider", "int_slider", "log_slider", "label_html", "Grid", "grid",
           "Explorer", "figure_gain_map", "figure_schedules", "figure_theorem3", "figure_leak_dispersion",
           "epsilon_star_map", "growth_factor_figure", "clipping_figure", "population_error", "conventions_figure",
           "llr_histogram", "tail_bounds_figure", "llr_law_figure", "roc_figure", "figure_gamma_star",
           "finish_horizon_axes", "figure_schedule_comparison", "draw_participation",
           # the Bernoulli figures, which take only a result since issue 31 (each sweep well under a second)
           "figure1", "figure2", "figure6", "figure7",
           # fourth pass: two that run their experiment at the table's sizes in about a second a sweep
           "final_error_figure", "figure3a",
           # the survival, horizon and Algorithm 1 figures, which now take only a result (issue 31): one argument each
           "figure3bc", "figure_mean_field", "figure_horizon", "algorithm1_runs"}
#: Drawing helpers and controls outside ``__all__`` since issue 31 (plumbing, not API), still fuzzed by their entries.
INTERNAL = {"style", "png_bytes", "display_width", "layout_problems", "plain_log", "math", "number", "assign", "params",
            "html", "population_error", "finish_horizon_axes", "family_label", "Grid", "checkbox", "label_html",
            "log_slider"}
#: Every plot and widget function is fuzzed (the fourth pass took the last ones; a test keeps this empty).
UNCHECKED = {name for _, name in PLOT_TYP} - CHECKED

#: (function, parameter) -> why it still fails: the cause is known and reported, the fix is not done yet.
#: Strict: a case that starts to pass must leave this table. (draw_participation's step = 1e300 left it when
#: diverging local steps became a ValueError naming step.) A sampled figure's known case leaves the sample
#: and is swept whole, as a strict xfail, by test_known_failures_of_the_sampled_figures.
KNOWN: dict = {}


def _cases(table, names=None):
    return [(mod, name, p) for (mod, name), kw in table.items() if names is None or name in names for p in kw]


CASES = _cases(TYP) + _cases(PLOT_TYP, HELPERS)
FIGURE_CASES = [c for c in _cases(PLOT_TYP, CHECKED - HELPERS) if (c[1], c[2]) not in KNOWN]


#: Values left out of a few sweeps for the time budget, with what the fuzzer measured:
_INVALID_AND_HUGE = [v for v in POOL if not (isinstance(v, (int, float)) and not isinstance(v, bool)
                                             and 0 < v < 1e300)]
POOL_OF = {
    # a small clipping radius makes the gamma search of a map ~10x slower (4 s a call at R <= 2, 0.4 s at R = 10;
    # gamma_map's R is its mechanism's, fuzzed through GaussianMean)
    ("threshold_table", "R"): _INVALID_AND_HUGE,
    # (a small R also makes p_tau a Monte Carlo integral in draw_schedule: 4-5 s a call at R in
    # {1e-300, 0.5, 1, 2} since the Monte Carlo evaluates Lemma 7 unchecked and the schedule surrogate fits 20000
    # records; it takes the whole pool in the sampled test. figure_horizon, 1.8-2.2 s, and figure3a, 1.3-1.8 s,
    # take a result only since issue 31: their R is the mechanism's, fuzzed through GaussianMean)
}


def _pool(param, name=None):
    if (name, param) in POOL_OF:
        return POOL_OF[(name, param)]
    return _size_pool(param) if param in SIZES else POOL


def _is_typical(value, typical):
    """Whether ``value`` is the typical call's own value (same type, equal): that call is the completeness test's."""
    return type(value) is type(typical) and not isinstance(value, (list, dict)) and value == typical


def _sweep(mod, name, param, table):
    problems = []
    for value in _pool(param, name):
        if _is_typical(value, table[(mod, name)][param]):
            continue           # the typical call itself: test_the_tables_hold_every_public_function_... checks it
        problem = _call(getattr(mod, name), dict(table[(mod, name)], **{param: value}), param)
        if problem:
            problems.append(f"{param}={value!r:.30}: {problem}")
    return problems


def test_every_plot_and_widget_function_is_fuzzed():
    assert UNCHECKED == set()
    assert CHECKED <= {name for _, name in PLOT_TYP}                   # no stale name
    assert INTERNAL <= CHECKED and not INTERNAL & (_public(plots) | _public(widgets))


def test_the_tables_hold_every_public_function_and_class_of_these_layers():
    tables = set(TYP) | set(PLOT_TYP) | {(feedback, "summary")}
    covered = {getattr(m, n) for m, n in tables} | {getattr(m, n) for m, n in EXEMPT}
    missing = {f"{m.__name__}.{n}" for m in MODULES for n in _public(m) if getattr(m, n) not in covered}
    assert missing == set()
    for (mod, name), kwargs in {**TYP, **PLOT_TYP}.items():        # each typical call is valid and well behaved
        assert _call(getattr(mod, name), kwargs, "") is None, name


def _mark(mod, name, param):
    reason = KNOWN.get((name, param))
    return pytest.param(mod, name, param, id=f"{mod.__name__.split('.')[-1]}.{name}-{param}",
                        marks=[pytest.mark.xfail(strict=True, reason=reason)] if reason else [])


@pytest.mark.parametrize("mod, name, param", [_mark(*c) for c in CASES])
def test_each_argument_replaced_by_typical_boundary_and_invalid_values(mod, name, param):
    table = TYP if (mod, name) in TYP else PLOT_TYP
    problems = _sweep(mod, name, param, table)
    assert not problems, f"{mod.__name__}.{name}: " + "; ".join(problems)


# 200 examples over the ~270 figure cases: a few seconds here (tens of ms a draw on average under the
# contract's memory guard; the refused values cost milliseconds)
@settings(max_examples=200, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(FIGURE_CASES), index=st.integers(0, len(POOL) - 1))
def test_figures_with_one_argument_replaced_by_a_pool_value(case, index):
    """A sample of the figures' sweep (drawing every figure with every value would take minutes)."""
    mod, name, param = case
    pool = _pool(param, name)
    value = pool[index % len(pool)]
    problem = _call(getattr(mod, name), dict(PLOT_TYP[(mod, name)], **{param: value}), param)
    assert problem is None, f"{mod.__name__}.{name}({param}={value!r:.30}): {problem}"


@pytest.mark.parametrize("mod, name, param", [_mark(*c) for c in _cases(PLOT_TYP, CHECKED - HELPERS)
                                              if (c[1], c[2]) in KNOWN])
def test_known_failures_of_the_sampled_figures(mod, name, param):
    """The known cases left out of the sample, swept whole (strict xfails: a fixed one must leave KNOWN)."""
    problems = _sweep(mod, name, param, PLOT_TYP)
    assert not problems, f"{mod.__name__}.{name}: " + "; ".join(problems)


#: Real parameters of the cheap closed forms, driven over every double.
REAL_CASES = [(mod, name, p) for mod, name, p in _cases(TYP)
              if p not in SIZES and isinstance(TYP[(mod, name)][p], float) and (name, p) not in KNOWN
              and name in {"ridge_sensitivity", "removal_sensitivity", "gamma_from_rho", "rho_from_gamma",
                           "noise_std", "achieved_rho", "leak_probability", "ols_excess_risk", "zcdp_cost",
                           "zcdp_to_dp", "release_renyi_divergence",
                           "sigma_for_rho", "utility_bound", "gdp_leak_probability", "two_classes",
                           "critical_epsilon", "StepRule", "GaussianClients", "threshold_curve"}]


@settings(max_examples=300, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(REAL_CASES), value=st.floats(allow_nan=True, allow_infinity=True, width=64))
def test_real_parameters_over_every_double(case, value):
    mod, name, param = case
    problem = _call(getattr(mod, name), dict(TYP[(mod, name)], **{param: value}), param)
    assert problem is None, f"{mod.__name__}.{name}({param}={value!r}): {problem}"


@pytest.mark.parametrize("call, word", [
    (lambda: plots.png_bytes(FIG, density=1e4), "density"),          # a 10^11-pixel image
    (lambda: plots.png_bytes(FIG, density=1e-6), "density"),         # less than one pixel
    (lambda: plots.new_figure(1, 10**6), "ncols"),
    (lambda: plots.new_figure(width=1e300), "width"),
    (lambda: plots.figure_fedavg_factors({f"p{k}": ([0, 1], {"a": [1.0, 2.0]}) for k in range(60)}), "ncols"),
])
def test_sizes_no_figure_can_show_are_refused_before_drawing(call, word):
    with pytest.raises(ValueError, match=word):
        call()
    plt.close("all")


@pytest.mark.parametrize("kwargs", [SUMMARY, dict(SUMMARY, gaussian_maps=None)], ids=["both maps", "no gaussian maps"])
def test_summary_has_nan_only_where_its_docstring_says(kwargs):
    # NaN is Summary's documented marker of a ratio it cannot form (no reference row, no map, no cell with
    # both optima finite); chapter 08 prints "not computed" there. Everything else is NaN-free.
    out = feedback.summary(**kwargs)
    for field in ("bernoulli_theory", "bernoulli_confirmed", "bernoulli_contradicted", "survival",
                  "survival_match", "gaussian_theory", "gaussian_confirmed", "gaussian_contradicted"):
        assert not np.isnan(np.asarray(getattr(out, field), float)).any(), field
    not_computed = out.gaussian_theory < 0
    assert np.all(np.isnan(out.gamma_ratio[not_computed]))
    if kwargs["gaussian_maps"] is None:
        assert not_computed.all()


def test_summary_refuses_what_is_not_a_list_of_maps():
    for bad in (0, None, "x", [[1.0]], [None]):
        assert _call(feedback.summary, dict(SUMMARY, bernoulli_maps=bad), "bernoulli_maps") is None
    for bad in (0, "x", [_MAPS[0]] * 2):          # Bernoulli maps where Gaussian ones belong
        assert _call(feedback.summary, dict(SUMMARY, gaussian_maps=bad), "gaussian_maps") is None
