// Per-item Jacobians written by hand in C++, the way Ceres users write them: the residual is
// a template on its scalar type, and a Jet (a value and N partial derivatives, Ceres's
// forward-mode dual number) pushes all 12 input directions through it in one pass. This is
// issue #32's anchor for per-observation Jacobians (bench/report_jacobians.py builds it with
// the system C++ compiler and calls it through ctypes; skipped without one).
//
// reprojection: the Bundle Adjustment in the Large camera model (Ceres's
// SnavelyReprojectionError): x = (angle-axis w (3), translation t (3), focal f, radial
// distortion k1, k2, point X (3)); P = R(w) X + t, p = -P[0:2] / P[2],
// r = f (1 + k1 |p|^2 + k2 |p|^4) p - observed. Rodrigues' rotation in Ceres's form
// (AngleAxisRotatePoint), without its small-angle branch: the data keep |w| in [0.1, 1].
#include <cmath>
#include <cstdint>

namespace {

constexpr int N = 12;

struct Jet {
    double a;
    double v[N];
    Jet() {}
    explicit Jet(double x) : a(x) {          // a constant: no derivative
        for (int k = 0; k < N; ++k) v[k] = 0.0;
    }
};

inline Jet operator+(const Jet& x, const Jet& y) {
    Jet r;
    r.a = x.a + y.a;
    for (int k = 0; k < N; ++k) r.v[k] = x.v[k] + y.v[k];
    return r;
}

inline Jet operator-(const Jet& x, const Jet& y) {
    Jet r;
    r.a = x.a - y.a;
    for (int k = 0; k < N; ++k) r.v[k] = x.v[k] - y.v[k];
    return r;
}

inline Jet operator-(const Jet& x) {
    Jet r;
    r.a = -x.a;
    for (int k = 0; k < N; ++k) r.v[k] = -x.v[k];
    return r;
}

inline Jet operator*(const Jet& x, const Jet& y) {
    Jet r;
    r.a = x.a * y.a;
    for (int k = 0; k < N; ++k) r.v[k] = x.a * y.v[k] + x.v[k] * y.a;
    return r;
}

inline Jet operator*(double s, const Jet& y) {
    Jet r;
    r.a = s * y.a;
    for (int k = 0; k < N; ++k) r.v[k] = s * y.v[k];
    return r;
}

inline Jet operator/(const Jet& x, const Jet& y) {
    Jet r;
    const double inv = 1.0 / y.a;
    r.a = x.a * inv;
    for (int k = 0; k < N; ++k) r.v[k] = (x.v[k] - r.a * y.v[k]) * inv;
    return r;
}

inline Jet sqrt(const Jet& x) {
    Jet r;
    r.a = std::sqrt(x.a);
    const double d = 0.5 / r.a;
    for (int k = 0; k < N; ++k) r.v[k] = d * x.v[k];
    return r;
}

inline Jet cos(const Jet& x) {
    Jet r;
    r.a = std::cos(x.a);
    const double d = -std::sin(x.a);
    for (int k = 0; k < N; ++k) r.v[k] = d * x.v[k];
    return r;
}

inline Jet sin(const Jet& x) {
    Jet r;
    r.a = std::sin(x.a);
    const double d = std::cos(x.a);
    for (int k = 0; k < N; ++k) r.v[k] = d * x.v[k];
    return r;
}

// The residual, a template as a Ceres cost functor's operator() is.
template <typename T>
void residual(const T* x, const double* observed, T* r) {
    const T* w = x;
    const T* t = x + 3;
    const T& f = x[6];
    const T& k1 = x[7];
    const T& k2 = x[8];
    const T* X = x + 9;
    using std::cos;
    using std::sin;
    using std::sqrt;
    const T theta = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    const T c = cos(theta), s = sin(theta);
    const T k[3] = {w[0] / theta, w[1] / theta, w[2] / theta};
    const T kx[3] = {k[1] * X[2] - k[2] * X[1], k[2] * X[0] - k[0] * X[2],
                     k[0] * X[1] - k[1] * X[0]};
    const T kdotx = (k[0] * X[0] + k[1] * X[1] + k[2] * X[2]) * (T(1.0) - c);
    T P[3];
    for (int i = 0; i < 3; ++i) P[i] = X[i] * c + kx[i] * s + k[i] * kdotx + t[i];
    const T px = -P[0] / P[2], py = -P[1] / P[2];
    const T r2 = px * px + py * py;
    const T d = T(1.0) + r2 * (k1 + k2 * r2);
    r[0] = f * d * px - T(observed[0]);
    r[1] = f * d * py - T(observed[1]);
}

}  // namespace

extern "C" {

// J[i] = d residual(x[i], obs[i]) / d x[i]: x (n, 12), obs (n, 2), J (n, 2, 12), row-major;
// the residuals themselves into r (n, 2).
void reprojection_jacobians(const double* x, const double* obs, int64_t n, double* r,
                            double* J) {
    for (int64_t i = 0; i < n; ++i) {
        Jet xj[N];
        for (int k = 0; k < N; ++k) {
            xj[k] = Jet(x[i * N + k]);
            xj[k].v[k] = 1.0;
        }
        Jet rj[2];
        residual(xj, obs + 2 * i, rj);
        for (int o = 0; o < 2; ++o) {
            r[2 * i + o] = rj[o].a;
            for (int k = 0; k < N; ++k) J[(i * 2 + o) * N + k] = rj[o].v[k];
        }
    }
}

}
