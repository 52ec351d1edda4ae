"""Shared by mle-fit's GARCH CLI tests (mle-garch*.sh): the GARCH(1,1)-AEPD
log-likelihood written from the model's definition, draws from the model, and
standard errors from a central-difference Hessian of that log-likelihood.
Written from the definitions (Bollerslev 1986; Zhu and Zinde-Walsh 2009), not
from mle-fit's kernels."""
import math
from math import lgamma

import numpy as np


def standard_aepd(a, p1, p2=None):
    """The AEPD with left mass a, shape p1 left of its mode and p2 right of it
    (p2 = p1: one shape), standardised to mean 0 and variance 1.

    Scale form: density exp(-((theta - z)/s_l)^p1) / D left of theta,
    exp(-((z - theta)/s_r)^p2) / D right, D = s_l G(1+1/p1) + s_r G(1+1/p2).
    Start from the unit form with D = 1 (s_l = a / G(1+1/p1), s_r = (1-a) / G(1+1/p2),
    mode 0); its branches are -s_l Y1 and s_r Y2 with Y = G^(1/p), G ~ Gamma(1/p, 1),
    so E Y^k = Gamma((k+1)/p) / Gamma(1/p); then shift by its mean and divide by its
    standard deviation. Returns (theta, s_l, s_r, log D)."""
    p2 = p1 if p2 is None else p2
    ey = lambda k, p: math.exp(lgamma((k + 1) / p) - lgamma(1 / p))
    sl0, sr0 = a / math.gamma(1 + 1 / p1), (1 - a) / math.gamma(1 + 1 / p2)
    mean = -a * sl0 * ey(1, p1) + (1 - a) * sr0 * ey(1, p2)
    second = a * sl0 ** 2 * ey(2, p1) + (1 - a) * sr0 ** 2 * ey(2, p2)
    sd = math.sqrt(second - mean ** 2)
    return -mean / sd, sl0 / sd, sr0 / sd, math.log(sd)  # density sd f(mean + sd z)


def garch_variance(e, omega, alpha, beta):
    """sigma_t^2 = omega + alpha e_{t-1}^2 + beta sigma_{t-1}^2 (Bollerslev 1986),
    sigma_1^2 the mean of e^2 (fGarch's "mci" start)."""
    drive = np.empty(len(e))
    drive[0] = np.mean(e ** 2)
    drive[1:] = omega + alpha * e[:-1] ** 2
    try:  # the recursion as a first-order linear filter
        from scipy.signal import lfilter
        return lfilter([1.0], [1.0, -beta], drive)
    except ImportError:
        h = drive.copy()
        for t in range(1, len(h)):
            h[t] += beta * h[t - 1]
        return h


def loglik(r, mu, omega, alpha, beta, a, p1, p2=None):
    """The GARCH(1,1) log-likelihood of returns r with innovations the
    standardised AEPD (one shape p1, or p1 and p2)."""
    p2 = p1 if p2 is None else p2
    th, sl, sr, log_norm = standard_aepd(a, p1, p2)
    e = r - mu
    h = garch_variance(e, omega, alpha, beta)
    u = e / np.sqrt(h) - th
    term = np.where(u <= 0, (np.maximum(-u, 0) / sl) ** p1, (np.maximum(u, 0) / sr) ** p2)
    return float(np.sum(log_norm - term - 0.5 * np.log(h)))


def simulate(n, mu, omega, alpha, beta, a, p1, p2=None, seed=1, burn=500):
    """n returns drawn from the model: each innovation a left draw
    theta - s_l G1^(1/p1) with probability a, else theta + s_r G2^(1/p2)."""
    p2 = p1 if p2 is None else p2
    th, sl, sr, _ = standard_aepd(a, p1, p2)
    rng = np.random.default_rng(seed)
    m = n + burn
    left = rng.random(m) < a
    z = np.where(left, th - sl * rng.gamma(1 / p1, size=m) ** (1 / p1), th + sr * rng.gamma(1 / p2, size=m) ** (1 / p2))
    r = np.empty(m)
    h, e = omega / (1 - alpha - beta), 0.0
    for t in range(m):
        h = omega + alpha * e * e + beta * h
        e = math.sqrt(h) * z[t]
        r[t] = mu + e
    return r[burn:]


def hessian_stderr(f, est, steps):
    """Standard errors from minus the inverse of f's Hessian at est (f a
    log-likelihood), by central differences with the given steps."""
    k = len(est)
    H = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            def at(si, sj):
                v = np.array(est, dtype=float)
                v[i] += si * steps[i]
                v[j] += sj * steps[j]
                return f(v)
            H[i, j] = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * steps[i] * steps[j])
    return np.sqrt(np.diag(np.linalg.inv(-H)))


def check_stderr(x, est, se, tolerance=0.10):
    """The tool's standard errors se of the estimate est (mu, omega, alpha, beta,
    skew, shapes...) within tolerance of a numerical Hessian's. With a shape
    below 2 the log-likelihood has a kink at the mode, so the steps are wide
    enough to hold many points near it: 2e-3 of each parameter's scale (omega:
    2e-5 of the variance)."""
    sd = np.std(x)
    steps = 2e-3 * np.array([sd, 1e-2 * sd * sd] + [1] * (len(est) - 2))
    se_num = hessian_stderr(lambda v: loglik(x, *v), est, steps)
    print("stderr", se, "numerical", se_num)
    assert np.all(np.abs(se / se_num - 1) < tolerance), (se, se_num)
    return se_num


def compare_backends(x, cpu_file, gpu_file, min_close, names):
    """A GPU run's GARCH fits against the CPU's (mle-gpu.sh states the tolerances):
    log-likelihoods within 1e-9 relative in at least the share min_close of the
    windows and within 1e-5 in all; in the windows within 1e-9, the records
    `names` within 1e-4 of their scale (|value|, at least the data's sd for
    theta, sigma and the quantiles, 1e-2 of its variance for omega, 1 for the
    others), omega within 1e-3. Returns the two files' records."""
    import numpipe
    sd = np.std(x)
    scale = {"theta": sd, "omega": 1e-2 * sd * sd, "quantiles": sd, "sigma": sd}
    c, g = numpipe.read(cpu_file), numpipe.read(gpu_file)
    llc, llg = c["loglik"].ravel(), g["loglik"].ravel()
    assert np.all(np.isfinite(llg)), "non-finite GPU log-likelihoods"
    rel = np.abs(llg - llc) / np.abs(llc)
    close = rel <= 1e-9
    print(f"{gpu_file}: {close.sum()} of {close.size} windows with loglik within 1e-9 relative, worst {rel.max():.3g}")
    assert close.mean() >= min_close, f"{gpu_file}: only {close.sum()} of {close.size} windows within 1e-9"
    assert rel.max() <= 1e-5, f"{gpu_file}: loglik differs by {rel.max():.3g} relative"
    for name in names:
        a, b = c[name].reshape(close.size, -1)[close], g[name].reshape(close.size, -1)[close]
        err = np.abs(b - a) / np.maximum(np.abs(a), scale.get(name, 1.0))
        tol = 1e-3 if name == "omega" else 1e-4  # omega: along the flat ridge of omega against alpha + beta
        print(f"  {name}: worst {err.max():.3g} of its scale")
        assert err.max() <= tol, f"{gpu_file}: {name} differs by {err.max():.3g} of its scale"
    return c, g


# The series of mle-garch-shapes*.sh: 3000 returns of GARCH(1,1) with two-shape
# AEPD innovations, written as a CSV column r (python3 mle_reference.py FILE).
SHAPES_TEST_TRUTH = (2e-4, 2e-6, 0.08, 0.9, 0.45, 1.3, 2.2)

if __name__ == "__main__":
    import sys
    series = simulate(3000, *SHAPES_TEST_TRUTH, seed=5)
    with open(sys.argv[1], "w") as f:
        f.write("r\n")
        f.writelines(f"{float(v)!r}\n" for v in series)  # float: NumPy 2 reprs np.float64(...)
