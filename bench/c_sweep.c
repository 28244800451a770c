/* A hand-written C switch interpreter over burnumba's flat tape (kernels/layout.py), for
 * bench/report_interp.py: the physical limit of a value-and-gradient sweep over a scalar graph.
 *
 * It reads the same packed arrays the generated kernels read: I = n out | op a0 a1 pp need
 * off[n+1] P, and F = imm[n] val[V] grad[V]. The opcodes come as -D flags made from the op
 * table (OP_ADD=...). The rows are the ones the random graph uses, with the same formulas as
 * kernels/ops.py (tanh included), so both interpreters compute the same numbers. A map row
 * here handles scalar nodes only, which is all a scalar graph has; burnumba's loop also tests
 * for tensor nodes, a cost this one does not pay. */
#include <math.h>
#include <stdint.h>
#include <string.h>

static double tanh_row(double a)
{
    if (fabs(a) >= 0.05)
        return copysign(2.0 / (1.0 + exp(-2.0 * fabs(a))) - 1.0, a);
    double a2 = a * a;
    return a * (1.0 + a2 * (-1.0 / 3.0 + a2 * (2.0 / 15.0 + a2 * (-17.0 / 315.0
                                                              + a2 * (62.0 / 2835.0)))));
}

/* Forward, zero the gradients, d out / d out = 1, reverse. Returns the output's value, or NaN
 * with *err = the node of an opcode it does not know, plus one. */
double value_and_grad(const int32_t *I, double *F, int64_t *err)
{
    const int32_t n = I[0], out = I[1];
    const int32_t *op = I + 2, *a0 = op + n, *a1 = a0 + n, *pp = a1 + n, *need = pp + n;
    const int32_t *off = need + n, *P = off + n + 1;
    const int32_t size = off[n];
    double *imm = F, *val = F + n, *grad = F + n + size;

    for (int32_t i = 0; i < n; i++) {
        const int32_t oy = off[i];
        switch (op[i]) {
        case OP_INPUT: case OP_CONST: break;
        case OP_ADD: val[oy] = val[off[a0[i]]] + val[off[a1[i]]]; break;
        case OP_SUBTRACT: val[oy] = val[off[a0[i]]] - val[off[a1[i]]]; break;
        case OP_MULTIPLY: val[oy] = val[off[a0[i]]] * val[off[a1[i]]]; break;
        case OP_DIVIDE: val[oy] = val[off[a0[i]]] / val[off[a1[i]]]; break;
        case OP_EXP: val[oy] = exp(val[off[a0[i]]]); break;
        case OP_LOG: val[oy] = log(val[off[a0[i]]]); break;
        case OP_SIN: val[oy] = sin(val[off[a0[i]]]); break;
        case OP_TANH: val[oy] = tanh_row(val[off[a0[i]]]); break;
        case OP_GATHER: {
            const int32_t p = pp[i], ny = off[i + 1] - oy;
            for (int32_t j = 0; j < ny; j++) val[oy + j] = val[P[p + j]];
            break;
        }
        case OP_SUM: {
            const int32_t p = pp[i];
            double acc = 0.0;
            for (int32_t k = 0; k < P[p]; k++) {
                const int32_t ik = P[p + 1 + k];
                for (int32_t e = off[ik]; e < off[ik + 1]; e++) acc += val[e];
            }
            val[oy] = imm[i] * acc;
            break;
        }
        case OP_SOFTMAX: {
            const int32_t p = pp[i], outer = P[p], m = P[p + 1], inner = P[p + 2];
            const int32_t oa = off[a0[i]];
            for (int32_t o = 0; o < outer; o++)
                for (int32_t k = 0; k < inner; k++) {
                    double mx = val[oa + o * m * inner + k], s = 0.0;
                    for (int32_t j = 1; j < m; j++)
                        if (val[oa + (o * m + j) * inner + k] > mx) mx = val[oa + (o * m + j) * inner + k];
                    for (int32_t j = 0; j < m; j++) {
                        const int32_t q = (o * m + j) * inner + k;
                        const double e = exp(val[oa + q] - mx);
                        val[oy + q] = e;
                        s += e;
                    }
                    for (int32_t j = 0; j < m; j++) val[oy + (o * m + j) * inner + k] /= s;
                }
            break;
        }
        default: *err = i + 1; return NAN;
        }
    }

    const int32_t oo = off[out];
    memset(grad, 0, sizeof(double) * (size_t)oo);
    grad[oo] = 1.0;
    for (int32_t i = out; i >= 0; i--) {
        if (!need[i]) continue;
        const int32_t oy = off[i];
        const double g = grad[oy], y = val[oy];
        const int32_t ia = a0[i], ib = a1[i];
        switch (op[i]) {
        case OP_INPUT: case OP_CONST: break;
        case OP_ADD:
            if (need[ia]) grad[off[ia]] += g;
            if (need[ib]) grad[off[ib]] += g;
            break;
        case OP_SUBTRACT:
            if (need[ia]) grad[off[ia]] += g;
            if (need[ib]) grad[off[ib]] += -g;
            break;
        case OP_MULTIPLY:
            if (need[ia]) grad[off[ia]] += g * val[off[ib]];
            if (need[ib]) grad[off[ib]] += g * val[off[ia]];
            break;
        case OP_DIVIDE:
            if (need[ia]) grad[off[ia]] += g / val[off[ib]];
            if (need[ib]) grad[off[ib]] += -g * y / val[off[ib]];
            break;
        case OP_EXP: if (need[ia]) grad[off[ia]] += g * y; break;
        case OP_LOG: if (need[ia]) grad[off[ia]] += g / val[off[ia]]; break;
        case OP_SIN: if (need[ia]) grad[off[ia]] += g * cos(val[off[ia]]); break;
        case OP_TANH: if (need[ia]) grad[off[ia]] += g * (1.0 - y * y); break;
        case OP_GATHER: {
            const int32_t p = pp[i], ny = off[i + 1] - oy;
            for (int32_t j = 0; j < ny; j++) grad[P[p + j]] += grad[oy + j];
            break;
        }
        case OP_SUM: {
            const int32_t p = pp[i];
            const double gc = imm[i] * g;
            for (int32_t k = 0; k < P[p]; k++) {
                const int32_t ik = P[p + 1 + k];
                if (need[ik])
                    for (int32_t e = off[ik]; e < off[ik + 1]; e++) grad[e] += gc;
            }
            break;
        }
        case OP_SOFTMAX: {
            const int32_t p = pp[i], outer = P[p], m = P[p + 1], inner = P[p + 2];
            const int32_t oa = off[ia];
            if (!need[ia]) break;
            for (int32_t o = 0; o < outer; o++)
                for (int32_t k = 0; k < inner; k++) {
                    double dot = 0.0;
                    for (int32_t j = 0; j < m; j++) {
                        const int32_t q = (o * m + j) * inner + k;
                        dot += grad[oy + q] * val[oy + q];
                    }
                    for (int32_t j = 0; j < m; j++) {
                        const int32_t q = (o * m + j) * inner + k;
                        grad[oa + q] += val[oy + q] * (grad[oy + q] - dot);
                    }
                }
            break;
        }
        default: *err = i + 1; return NAN;
        }
    }
    return val[oo];
}
