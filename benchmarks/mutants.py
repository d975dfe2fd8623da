"""Mutation testing of perfpriv's formula modules: does the test suite notice a wrong formula?

Each mutant is one source-level change of one formula (a constant, a power, a sign, an
index). For each, the package is copied to a temporary folder, the change applied (the
original text must occur exactly once), and the test files that guard that module run
against the copy with ``-x -q``; a failing run *kills* the mutant. A table of killed and
surviving mutants is printed at the end. Survivors that no test can kill are listed, with
the reason, in CONTRIBUTING.md ("Mutation testing").

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
    M("bernoulli.variance", "bernoulli.py", "return (0.25 - beta**2 * s2) / (4.0 * beta**2)",
      "return (0.25 - beta**2 * s2 * 1.05) / (4.0 * beta**2)", T_BERN, "Lemma 10 variance: 5% on the μ term"),
    M("bernoulli.mu_moment", "bernoulli.py", "return (u * u + u * v + v * v) / 3.0",
      "return (u * u + u * v + v * v) / 3.1", T_BERN, "E[(2μ−1)²] of Uniform(a, b)"),
    M("bernoulli.theorem1", "bernoulli.py", "raw = (rr - qq) / (2.0 * np.where(empty, 1.0, s))",
      "raw = (rr - qq) / (2.1 * np.where(empty, 1.0, s))", T_BERN, "Theorem 1: β_c"),
    M("bernoulli.responses", "bernoulli.py", "responses = ones_kept + (users - leaked - ones_flipped)",
      "responses = ones_kept + ones_flipped", T_BERN, "simulated responses: flipped bits not flipped"),
    M("bernoulli.error_grad", "bernoulli.py", "-(eps * dbeta) / (8.0 * beta**3 * n)",
      "-(eps * dbeta) / (8.0 * beta**2 * n)", T_BERN, "adjoint input de/dlog ε: β³ → β²"),
    M("bernoulli.leak_grad", "bernoulli.py", "np.broadcast_to(eps * dbeta, p.shape)",
      "np.broadcast_to(dbeta, p.shape)", T_BERN, "adjoint input dp/dlog ε: ε dropped"),
    # ---------------------------------------------------------------- gaussian
    M("gaussian.lemma3", "gaussian.py", "np.asarray(gamma, float) ** 2 * trace_inv + d",
      "np.asarray(gamma, float) * trace_inv + d", T_GAUSS, "Lemma 3 with γ for γ²"),
    M("gaussian.zcdp", "gaussian.py", "out = np.asarray(R, float) * np.sqrt(2.0 / np.asarray(rho, float))",
      "out = np.asarray(R, float) * np.sqrt(2.1 / np.asarray(rho, float))", T_GAUSS, "γ = R√(2/ρ)"),
    M("gaussian.records_noise", "gaussian.py", "eta = xi * (gg[p] / math.sqrt(N))",
      "eta = xi * (gg[p] / math.sqrt(N - 1 if N > 1 else 1))", T_GAUSS, "records draw noise γ²/(N−1)"),
    M("gaussian.lone_user", "gaussian.py", "                    leaked[p] = 1\n",
      "                    leaked[p] = 0\n", T_GAUSS, "records draw: a lone user does not leak"),
    M("gaussian.error_grad", "gaussian.py", "return e, -e, 2.0 * g**2 * self._trace_inv",
      "return e, -e, 1.0 * g**2 * self._trace_inv", T_GAUSS, "adjoint input de/dlog γ"),
    M("gaussian.p_interp", "gaussian.py", "out[low] = (1.0 - w) + w * vals[k:]",
      "out[low] = w + (1.0 - w) * vals[k:]", T_GAUSS, "p_τ between n = 1 and 2"),
    M("gaussian.records_deviation", "gaussian.py", "dev_sq = np.maximum(sq[:N] - 2.0 * (Zn @ mean) + float(mean @ mean), 0.0)",
      "dev_sq = np.maximum(sq[:N] - 2.0 * (Zn @ mean) + 1.05 * float(mean @ mean), 0.0)", T_GAUSS,
      "records draw: ‖z − z̄‖² off"),
    # ---------------------------------------------------------------- leakage
    M("leakage.llr_A_paper", "leakage.py", "return n / ((n - 1) ** 2 * g2), 2.0 * n",
      "return n / ((n - 1) ** 2 * g2 * 1.03), 2.0 * n", T_LEAK, "Lemma 6 quadratic coefficient (3%)"),
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
    M("projected.bias3", "projected.py", "err = along * along + hbar_sq", "err = 1.03 * (along * along + hbar_sq)",
      T_PROJ, "+3% bias of the projected draw's error"),
    M("projected.noise_norm", "projected.py", "eta_norm = gamma * xi_norm[gid] / np.sqrt(n)",
      "eta_norm = gamma * xi_norm[gid] / np.sqrt(n + 1)", T_PROJ, "‖η‖ = γ‖ξ‖/√(N+1)"),
    M("projected.spread", "projected.py", "spread * np.sqrt(np.maximum(n[owners] - m, 0))[:, None]",
      "spread * np.sqrt(np.maximum(n[owners] - m + 1, 0))[:, None]", T_PROJ, "rest of h̄: N − m + 1 records"),
    M("projected.band_quantile", "projected.py", "t_n = (1.0 - 1.0 / nm) * _band_quantile(d)",
      "t_n = (1.0 - 1.0 / nm) * 0.5 * _band_quantile(d)", T_PROJ, "skip quantile halved"),
    M("projected.hbar", "projected.py", "hbar_sq = np.einsum(\"gi,gi->g\", rest, rest)[gid] / n if d > 1",
      "hbar_sq = np.einsum(\"gi,gi->g\", rest, rest)[gid] / (n + 1) if d > 1", T_PROJ, "‖h̄‖² over N+1"),
    M("projected.lone", "projected.py", "leaked = np.where(lone, 1, np.where(all_leak, n, sure))",
      "leaked = np.where(lone, 0, np.where(all_leak, n, sure))", T_PROJ, "a lone user does not leak"),
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
    M("behaviour.pool", "behaviour.py", "pool = n - leaked if self.rule == \"leak\" else n", "pool = n",
      T_BEH, "leak rule: leaked users recruit too"),
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
    M("random.uniform_half", "keyed.py", "    u += 0.5\n", "    u += 0.25\n", T_RAND, "uniform offset 1/2 → 1/4"),
    M("random.normal_scale", "keyed.py", "return special.ndtri(self.uniform(size))",
      "return special.ndtri(self.uniform(size)) * 1.01", T_RAND, "normals 1% too wide"),
    M("random.inversion_round", "keyed.py", "g = np.ceil(np.log(u) * inv_log_q[active, None])",
      "g = np.round(np.log(u) * inv_log_q[active, None])", T_RAND, "geometric waiting time rounded"),
    M("random.btrs_vr", "keyed.py", "v_r = 0.92 - 4.2 / b", "v_r = 0.96 - 4.2 / b", T_RAND,
      "BTRS quick-acceptance region too large"),
    M("random.btrs_bound", "keyed.py", "accept[rows, cols] = lv <= bound", "accept[rows, cols] = lv <= bound + 0.02",
      T_RAND, "BTRS acceptance test 2% loose"),
    M("random.stirling", "keyed.py", "series = (1.0 / 12 - (1.0 / 360", "series = (1.0 / 11 - (1.0 / 360",
      T_RAND, "Stirling series first term"),
    M("random.mix_gamma", "keyed.py", "z ^= z >> _S33\n        z *= _U64(0xC4CEB9FE1A85EC53)",
      "z ^= z >> _S31\n        z *= _U64(0xC4CEB9FE1A85EC53)", T_RAND, "stream increment mixer"),
]


def run_mutant(m: Mutant, python: str, timeout: float) -> tuple:
    src = ROOT / "perfpriv" / m.file
    text = src.read_text()
    count = text.count(m.old)
    if count != 1:
        return m, "broken", f"the original text occurs {count} times", 0.0
    with tempfile.TemporaryDirectory(prefix="perfpriv-mutant-") as tmp:
        shutil.copytree(ROOT / "perfpriv", Path(tmp) / "perfpriv",
                        ignore=shutil.ignore_patterns("__pycache__"))
        (Path(tmp) / "perfpriv" / m.file).write_text(text.replace(m.old, m.new))
        env = dict(os.environ, PYTHONPATH=tmp, PYTHONDONTWRITEBYTECODE="1")
        # run from the copy's folder: `python -m` puts the working directory first on sys.path,
        # so the mutated copy is imported, never the checkout or the installed package
        where = subprocess.run([python, "-c", "import perfpriv; print(perfpriv.__file__)"], cwd=tmp, env=env,
                               capture_output=True, text=True).stdout.strip()
        if not where.startswith(tmp):
            return m, "broken", f"the copy is not imported ({where})", 0.0
        cmd = [python, "-m", "pytest", *(str(ROOT / t) for t in m.tests), "-x", "-q", "-p", "no:cacheprovider",
               "-o", "addopts=", "--rootdir", str(ROOT)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return m, "killed", "timeout", time.perf_counter() - start
        took = time.perf_counter() - start
        if proc.returncode == 0:
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
            print(f"{m.id:28s} {m.file:14s} {m.what}")
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
          + (f"; broken (original text not found once): {', '.join(broken)}" if broken else "")
          + f"; {time.perf_counter() - start:.0f} s")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
