"""Mutation testing of perfpriv's formula modules: does the test suite notice a wrong formula?

Each mutant is one source-level change of one formula (a constant, a power, a sign, an
index). For each, the package is copied to a temporary folder, the change applied (the
original text must occur exactly once), and the test files that guard that module run
against the copy with ``-x -q``; a failing run *kills* the mutant. A table of killed and
surviving mutants is printed at the end. Survivors that no test can kill are listed, with
the reason, in CONTRIBUTING.md ("Mutation testing").

A mutant is *broken*, not run, when its original text does not occur exactly once (the
formula was rewritten: ``tests/test_benchmark_scripts.py`` checks this without running
anything), and a run is *broken* when the tests imported another perfpriv than the
mutated copy (a plugin records which one; otherwise every mutant would silently survive).
Formulas that live in the compiled kernels (``perfpriv/_kernels/``) are mutated there: the
copy then compiles its kernels afresh (other mutants reuse numba's cache, see ``_ignore``).

Usage (from the repository root)::

    python benchmarks/mutants.py               # every mutant, 2 at a time
    python benchmarks/mutants.py -k projected  # mutants whose id contains "projected"
    python benchmarks/mutants.py --jobs 1 --list

This is a script, not a test: it takes a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

T_BERN = ("tests/test_bernoulli.py", "tests/test_engine.py", "tests/test_inlaw.py")
T_GAUSS = ("tests/test_gaussian.py", "tests/test_inlaw.py", "tests/test_engine.py")
T_LEAK = ("tests/test_leakage.py", "tests/test_projected.py", "tests/test_inlaw.py")
T_PROJ = ("tests/test_projected.py", "tests/test_inlaw.py")
T_DYN = ("tests/test_dynamics.py",)
T_BEH = ("tests/test_behaviour.py", "tests/test_bernoulli.py")
T_ENG = ("tests/test_engine.py",)
T_RAND = ("tests/test_keyed.py",)


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str
    old: str
    new: str
    tests: tuple
    what: str


M = Mutant
MUTANTS = [
    # ---------------------------------------------------------------- bernoulli
    M("bernoulli.lemma1", "bernoulli.py", "beta = 0.5 * np.tanh(np.asarray(eps) / 2.0)",
      "beta = 0.5 * np.tanh(np.asarray(eps) / 2.1)", T_BERN, "Lemma 1: tanh(ε/2.1)"),
    M("bernoulli.eq1", "bernoulli.py", "return (nu - 0.5 + beta) / (2.0 * beta)",
      "return (nu - 0.5 + 1.02 * beta) / (2.0 * beta)", T_BERN, "eq. 1 debiasing off by 2% of β"),
    M("bernoulli.variance", "bernoulli.py", "(0.25 - beta**2 * s2) / (4.0 * np.maximum(beta, 1e-150) ** 2)",
      "(0.25 - beta**2 * s2 * 1.05) / (4.0 * np.maximum(beta, 1e-150) ** 2)", T_BERN,
      "Lemma 10 variance: 5% on the μ term"),
    M("bernoulli.mu_moment", "bernoulli.py", "return (u * u + u * v + v * v) / 3.0",
      "return (u * u + u * v + v * v) / 3.1", T_BERN, "E[(2μ−1)²] of Uniform(a, b)"),
    M("bernoulli.theorem1", "bernoulli.py", "raw = (rr - qq) / (2.0 * np.where(empty, 1.0, s))",
      "raw = (rr - qq) / (2.1 * np.where(empty, 1.0, s))", T_BERN, "Theorem 1: β_c"),
    M("bernoulli.responses", "bernoulli.py", "responses = ones_kept + (users - leaked - ones_flipped)",
      "responses = ones_kept + ones_flipped", T_BERN, "simulated responses: flipped bits not flipped"),
    M("bernoulli.error_grad", "bernoulli.py", "slope = -_eps_dbeta(eps) / (8.0 * beta**3 * n)",
      "slope = -_eps_dbeta(eps) / (8.0 * beta**2 * n)", T_BERN, "adjoint input de/dlog ε: β³ → β²"),
    M("bernoulli.leak_grad", "bernoulli.py", "np.broadcast_to(_eps_dbeta(eps), p.shape)",
      "np.broadcast_to(_eps_dbeta(eps) / np.where(eps > 0, eps, 1.0), p.shape)", T_BERN,
      "adjoint input dp/dlog ε: ε dropped (β′ for εβ′)"),
    # ---------------------------------------------------------------- gaussian
    M("gaussian.lemma3", "gaussian.py", "np.asarray(gamma, float) ** 2 * trace_inv + d",
      "np.asarray(gamma, float) * trace_inv + d", T_GAUSS, "Lemma 3 with γ for γ²"),
    M("gaussian.zcdp", "gaussian.py", "out = np.asarray(R, float) * np.sqrt(2.0 / np.asarray(rho, float))",
      "out = np.asarray(R, float) * np.sqrt(2.1 / np.asarray(rho, float))", T_GAUSS, "γ = R√(2/ρ)"),
    # the records draw is one compiled kernel (_kernels/gaussian_mean.py: records_group_round)
    M("gaussian.records_noise", "_kernels/gaussian_mean.py", "scale = gammas[lv] / math.sqrt(n)",
      "scale = gammas[lv] / math.sqrt(n - 1 if n > 1 else 1)", T_GAUSS, "records draw noise γ²/(N−1)"),
    M("gaussian.lone_user", "_kernels/gaussian_mean.py",
      "        if n == 1:\n            leaked[lv] = 1\n            continue\n        mm = 0.0",
      "        if n == 1:\n            leaked[lv] = 0\n            continue\n        mm = 0.0", T_GAUSS,
      "records draw: a lone user does not leak"),
    M("gaussian.error_grad", "gaussian.py", "return e, -e, 2.0 * g**2 * self._trace_inv",
      "return e, -e, 1.0 * g**2 * self._trace_inv", T_GAUSS, "adjoint input de/dlog γ"),
    M("gaussian.p_interp", "gaussian.py", "out[low] = (1.0 - w) + w * vals[k:]",
      "out[low] = w + (1.0 - w) * vals[k:]", T_GAUSS, "p_τ between n = 1 and 2"),
    M("gaussian.records_deviation", "_kernels/gaussian_mean.py", "dev = sq[i] - 2.0 * zm[i] + mm",
      "dev = sq[i] - 2.0 * zm[i] + 1.05 * mm", T_GAUSS, "records draw: ‖z − z̄‖² off"),
    # ---------------------------------------------------------------- leakage
    M("leakage.llr_A_paper", "leakage.py", "a = n / ((n - 1) ** 2 * g2)\n",
      "a = n / ((n - 1) ** 2 * g2 * 1.03)\n", T_LEAK, "Lemma 6 quadratic coefficient (3%)"),
    M("leakage.llr_B_exact", "leakage.py", "return 1.0 / ((n - 1) * g2), 2.0 / g2,",
      "return 1.0 / ((n - 1) * g2), 2.06 / g2,", T_LEAK, "exact statistic, linear coefficient (3%)"),
    M("leakage.offset", "leakage.py", "return 0.5 * d * np.log1p(1.0 / (np.asarray(n, dtype=float) - 1.0))",
      "return 0.5 * d * np.log1p(1.0 / (np.asarray(n, dtype=float) - 0.9))", T_LEAK, "(d/2) log(n/(n−1))"),
    M("leakage.lemma7", "leakage.py", "tau / np.where(mu > 0, mu, 1.0) - 0.5 * mu",
      "tau / np.where(mu > 0, mu, 1.0) - 0.45 * mu", T_LEAK, "Lemma 7 tail argument"),
    M("leakage.gdp_mu", "leakage.py", "return _out(_ratio(s, gamma) * (np.sqrt(n) / (n - 1)))",
      "return _out(_ratio(s, gamma) * (np.sqrt(n) / n))", T_LEAK, "GDP μ' = √n s/(γ(n−1))"),
    M("leakage.quadrature_t", "leakage.py", "t_paper = 2.0 * tau", "t_paper = 2.1 * tau", T_LEAK,
      "p_τ quadrature threshold"),
    M("leakage.renyi", "leakage.py", "return _out(alpha * llr_moments(s, n, gamma).mean)",
      "return _out((alpha + 0.05) * llr_moments(s, n, gamma).mean)", T_LEAK, "Lemma 11 D_α"),
    # ---------------------------------------------------------------- projected
    # the projected draw is one compiled kernel (_kernels/gaussian_mean.py: group_round)
    M("projected.bias3", "_kernels/gaussian_mean.py", "err[lv] = al * al + (rest_sq / n if w > 0 else 0.0)",
      "err[lv] = 1.03 * (al * al + (rest_sq / n if w > 0 else 0.0))", T_PROJ,
      "+3% bias of the projected draw's error"),
    M("projected.noise_norm", "_kernels/gaussian_mean.py", "eta_norm = gammas[lv] * xi_norm / math.sqrt(n)",
      "eta_norm = gammas[lv] * xi_norm / math.sqrt(n + 1)", T_PROJ, "‖η‖ = γ‖ξ‖/√(N+1)"),
    M("projected.chain_pull", "_kernels/gaussian_mean.py", "along = length / remaining + math.sqrt(spread) * u",
      "along = math.sqrt(spread) * u", T_PROJ, "the chain forgets the pull D/n of the visited deviations"),
    M("projected.chain_spread", "_kernels/gaussian_mean.py", "spread = 1.0 - 1.0 / remaining",
      "spread = 1.0 - 1.0 / (remaining + 1.0)", T_PROJ, "the chain's variance 1 − 1/(n_k + 1)"),
    M("projected.chi_square", "_kernels/gaussian_mean.py", "total = 2.0 * (total - math.log(product))",
      "total = 2.1 * (total - math.log(product))", T_PROJ, "χ² variates 5% too large"),
    M("projected.band_quantile", "_kernels/gaussian_mean.py", "roots(k0 - (1.0 - 1.0 / n) * t_band, k1)",
      "roots(k0 - (1.0 - 1.0 / n) * 0.5 * t_band, k1)", T_PROJ, "skip quantile halved"),
    M("projected.hbar", "_kernels/gaussian_mean.py", "(rest_sq / n if w > 0 else 0.0)",
      "(rest_sq / (n + 1) if w > 0 else 0.0)", T_PROJ, "the error's ‖h̄‖² over N+1"),
    M("projected.lone", "_kernels/gaussian_mean.py",
      "        if n == 1:\n            leaked[lv] = 1\n            continue\n        k0, k1 = parabola(",
      "        if n == 1:\n            leaked[lv] = 0\n            continue\n        k0, k1 = parabola(", T_PROJ,
      "a lone user does not leak"),
    # ---------------------------------------------------------------- dynamics
    M("dynamics.thm4_V", "dynamics.py", "math.log(4 / delta)", "math.log(2 / delta)", T_DYN,
      "Theorem 4: V with ln(2/δ)"),
    M("dynamics.thm4_K", "dynamics.py", "K = d + 2 * math.sqrt(d * lg) + 2 * lg", "K = d + math.sqrt(d * lg) + lg",
      T_DYN, "Theorem 4: K without its factors 2"),
    M("dynamics.thm4_B", "dynamics.py", "z = (R - M) / (2 * math.sqrt(lam_max_sigma))",
      "z = (R - M) / (math.sqrt(lam_max_sigma))", T_DYN, "Theorem 4: clipping bias B(R)"),
    M("dynamics.thm2", "dynamics.py", "scale = 2 * mech.R * np.sqrt(n) / (n - 1)", "scale = 2 * mech.R * np.sqrt(n) / n",
      T_DYN, "Theorem 2: 2R√N/(N−1)"),
    M("dynamics.probit", "dynamics.py", "fac = np.where(x >= 0, (x + root) / (2 * tau), 1.0 / (root - x))",
      "fac = np.where(x >= 0, (x + root) / (2.2 * tau), 1.0 / (root - x))", T_DYN, "Theorem 2 probit factor"),
    M("dynamics.kappa", "dynamics.py", "out = 1.0 + (q + r) ** 2 / (4 * (1 - q) * (1 + r))",
      "out = 1.0 + (q + r) ** 2 / (4 * (1 - q) * (1 + q))", T_DYN, "Theorem 3: κ"),
    M("dynamics.lemma9", "dynamics.py", "val = -np.expm1(-T * np.log1p(safe)) / safe",
      "val = -np.expm1(-(T + 1) * np.log1p(safe)) / safe", T_DYN, "Lemma 9: Σ C^−t to T+1"),
    M("dynamics.infinite", "dynamics.py", "num = np.log(np.asarray(mech.one_record_error(gammas), float)) + math.log1p(r)",
      "num = np.log(np.asarray(mech.one_record_error(gammas), float)) + math.log1p(r) * 1.05", T_DYN,
      "infinite-horizon limit: (1 + r) factor"),
    # ---------------------------------------------------------------- behaviour
    M("behaviour.agnostic", "behaviour.py", "excess = r - (q + r) * p if self.rule == \"leak\" else r - q * p",
      "excess = r - (q + r) * p if self.rule == \"leak\" else r - q * p * 0.97", T_BEH, "appendix B growth (3%)"),
    M("behaviour.pool", "_kernels/behaviours.py",   # Memoryless's round: _kernels/behaviours.py memoryless_step
      "    pool = n - leaked if params[2] != 0.0 else n\n    la, lb = child_hashed(",
      "    pool = n\n    la, lb = child_hashed(", T_BEH, "leak rule: leaked users recruit too"),
    M("behaviour.grad", "behaviour.py", "dp = -(q + r) * n if self.rule == \"leak\" else -q * n",
      "dp = -q * n if self.rule == \"leak\" else -q * n", T_BEH + T_ENG, "mean-field step derivative in p"),
    # ---------------------------------------------------------------- engine
    M("engine.ran", "engine.py", "mean = np.where(ran > 0, total / np.maximum(ran, 1), 0.0)",
      "mean = np.where(ran > 0, total / np.maximum(ran + 1, 1), 0.0)", T_ENG, "collapse='ran' mean"),
    M("engine.repeat", "engine.py", "sq_error[..., t - 1] = np.where(col, sq_error[..., t - 2], sq_error[..., t - 1])",
      "sq_error[..., t - 1] = np.where(col, 0.0, sq_error[..., t - 1])", T_ENG, "collapse='repeat'"),
    M("engine.floor_score", "engine.py", "return self.expected_error(np.ones(np.shape(level)), level)",
      "return self.expected_error(2.0 * np.ones(np.shape(level)), level)", T_ENG, "collapse='floor' one-user error"),
    M("engine.adjoint_lam", "engine.py", "            lam = de_dN + lam * dNt_dNprev",
      "            lam = de_dN + lam * dn_dn", T_ENG, "adjoint: ∂p/∂N dropped from λ"),
    M("engine.adjoint_grad", "engine.py",
      "            grad[..., t - 1] = de_dlogl + lam * dNt_du\n            lam = de_dN + lam * dNt_dNprev",
      "            grad[..., t - 1] = de_dlogl\n            lam = de_dN + lam * dNt_dNprev", T_ENG,
      "adjoint: the population path of a level dropped"),
    M("engine.adjoint_paper", "engine.py", "            lam = lam + de_dN\n",
      "            lam = lam + 0.0 * de_dN\n", T_ENG, "adjoint, rounds='paper': error of N_t dropped"),
    # ---------------------------------------------------------------- keyed
    # keyed's streams and samplers are compiled kernels (_kernels/streams.py, kernels/samplers.py)
    M("random.uniform_half", "_kernels/streams.py",
      "return (np.float64(bits(a, gamma, counter) >> S11) + 0.5) * TWO_M53",
      "return (np.float64(bits(a, gamma, counter) >> S11) + 0.25) * TWO_M53", T_RAND, "uniform offset 1/2 → 1/4"),
    M("random.normal_scale", "_kernels/streams.py", "out[i] = ndtri(uniform(a[i], gamma[i], counters[i]))",
      "out[i] = ndtri(uniform(a[i], gamma[i], counters[i])) * 1.01", T_RAND, "Key.normal's normals 1% too wide"),
    M("random.inversion_round", "_kernels/samplers.py",
      "total += np.ceil(math.log(uniform(a, gamma, j)) * inv_log_q)",
      "total += np.rint(math.log(uniform(a, gamma, j)) * inv_log_q)", T_RAND, "geometric waiting time rounded"),
    M("random.btrs_vr", "_kernels/samplers.py", "v_r = 0.92 - 4.2 / b", "v_r = 0.96 - 4.2 / b", T_RAND,
      "BTRS quick-acceptance region too large"),
    M("random.btrs_bound", "_kernels/samplers.py", "        if lv <= bound:\n", "        if lv <= bound + 0.02:\n",
      T_RAND, "BTRS acceptance test 2% loose"),
    M("random.stirling", "_kernels/samplers.py", "return (1.0 / 12 - (1.0 / 360", "return (1.0 / 11 - (1.0 / 360",
      T_RAND, "Stirling series first term"),
    M("random.mix_gamma", "_kernels/streams.py", "    z ^= z >> S33\n    z *= G2", "    z ^= z >> S31\n    z *= G2",
      T_RAND, "stream increment mixer"),
]


#: A pytest plugin, written beside each mutated copy and loaded with ``-p``: it records the file of
#: the perfpriv the tests imported, so that a run that tested the checkout instead of the copy is
#: reported as broken, never as a surviving mutant.
_GUARD = "_perfpriv_mutant_guard"
_GUARD_SOURCE = """import os
import sys


def pytest_sessionfinish(session, exitstatus):
    module = sys.modules.get("perfpriv")
    with open(os.environ["PERFPRIV_MUTANT_WHERE"], "w") as out:
        out.write(getattr(module, "__file__", None) or "")
"""


def _ignore(folder, names):
    """What the copy leaves out: every ``__pycache__`` but numba's cached kernels.

    The kernels' cache (``perfpriv/_kernels/__pycache__``, ``*.nbi``/``*.nbc`` and the stamp of
    :func:`perfpriv._kernels.drop_stale_caches`) is copied with the sources' times, so a mutant
    outside the kernels loads them instead of compiling them again (a minute and more per run);
    a mutated kernel changes the digest of the kernels' sources, and the copy then drops the
    whole cache on import and compiles afresh. Python's bytecode is never copied.
    """
    here = Path(folder)
    if here.name == "__pycache__":
        keep = here.parent.name == "_kernels"
        return [name for name in names if not (keep and name.endswith((".nbi", ".nbc", ".stamp")))]
    return [name for name in names if name == "__pycache__" and here.name != "_kernels"]


def run_mutant(m: Mutant, python: str, timeout: float) -> tuple:
    src = ROOT / "perfpriv" / m.file
    text = src.read_text()
    count = text.count(m.old)
    if count != 1:
        return m, "broken", f"the original text occurs {count} times", 0.0
    with tempfile.TemporaryDirectory(prefix="perfpriv-mutant-") as tmp:
        shutil.copytree(ROOT / "perfpriv", Path(tmp) / "perfpriv", ignore=_ignore)
        (Path(tmp) / "perfpriv" / m.file).write_text(text.replace(m.old, m.new))
        where_file = Path(tmp) / "imported-perfpriv.txt"
        (Path(tmp) / f"{_GUARD}.py").write_text(_GUARD_SOURCE)
        env = dict(os.environ, PYTHONPATH=tmp, PYTHONDONTWRITEBYTECODE="1", PERFPRIV_MUTANT_WHERE=str(where_file))
        # run from the copy's folder (`python -m` puts the working directory first on sys.path), and
        # load no conftest.py above tests/: pytest's default import mode puts the folder of each
        # conftest.py it loads first on sys.path, and the root conftest.py would put the checkout's
        # perfpriv before the copy. The guard plugin records which perfpriv the tests imported.
        cmd = [python, "-m", "pytest", *(str(ROOT / t) for t in m.tests), "-x", "-q", "-p", "no:cacheprovider",
               "-o", "addopts=", "--rootdir", str(ROOT), "--confcutdir", str(ROOT / "tests"), "-p", _GUARD]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return m, "killed", "timeout", time.perf_counter() - start
        took = time.perf_counter() - start
        where = where_file.read_text() if where_file.exists() else ""
        if where and not os.path.realpath(where).startswith(os.path.realpath(tmp) + os.sep):
            return m, "broken", f"the tests imported {where}, not the mutated copy", took
        if proc.returncode == 0:
            if not where:
                return m, "broken", "the tests never imported perfpriv", took
            return m, "survived", "", took
        tail = [line for line in proc.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
        first = tail[0] if tail else proc.stdout.strip().splitlines()[-1]
        first = first.split("tests/test_", 1)[-1].split(" - ")[0]  # test_file.py::test_name[...]
        return m, "killed", "test_" + first[:100] if tail else first[:100], took


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="run only mutants whose id contains this")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if args.k in m.id]
    if args.list:
        for m in chosen:
            print(f"{m.id:28s} {m.file:24s} {m.what}")
        return 0
    print(f"{len(chosen)} mutants, {args.jobs} at a time", flush=True)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda m: run_mutant(m, sys.executable, args.timeout), chosen))
    print(f"\n{'mutant':28s} {'status':9s} {'s':>5s}  what / first failure")
    for m, status, info, took in results:
        print(f"{m.id:28s} {status:9s} {took:5.1f}  {m.what}" + (f"  [{info}]" if info else ""))
    killed = sum(r[1] == "killed" for r in results)
    survived = [r[0].id for r in results if r[1] == "survived"]
    broken = [r[0].id for r in results if r[1] == "broken"]
    print(f"\nkilled {killed}/{len(results)}; survived {len(survived)}: {', '.join(survived) or '-'}"
          + (f"; broken (not applied, or the copy not tested; see above): {', '.join(broken)}" if broken else "")
          + f"; {time.perf_counter() - start:.0f} s")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
