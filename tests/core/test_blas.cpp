// blas::gemm against a float64 loop, for every transpose pair and for the shapes it hands to
// gemv (M == 1, N == 1) beside ones it hands to gemm, with leading dimensions wider than the
// matrix and an output full of NaN (beta = 0 must not read it).

#include "core/util/blas.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <vector>

using namespace matmulviz;

namespace {

/// op(X)[r, c] of a row-major matrix stored [rows, cols] (or [cols, rows] when trans).
template <typename T>
double at(const std::vector<T>& x, bool trans, int64_t ld, int64_t r, int64_t c) {
  return static_cast<double>(trans ? x[c * ld + r] : x[r * ld + c]);
}

template <typename T>
double maxError(bool transA, bool transB, int64_t M, int64_t N, int64_t K, double beta) {
  const int64_t pad = 3;  // leading dimensions wider than the stored rows
  const int64_t lda = (transA ? M : K) + pad, ldb = (transB ? K : N) + pad, ldc = N + pad;
  std::vector<T> A((transA ? K : M) * lda), B((transB ? N : K) * ldb);
  for (size_t i = 0; i < A.size(); ++i) A[i] = static_cast<T>(std::sin(0.7 * i));
  for (size_t i = 0; i < B.size(); ++i) B[i] = static_cast<T>(std::cos(0.3 * i));
  const T fill = beta == 0 ? std::numeric_limits<T>::quiet_NaN() : T{2};
  std::vector<T> C(M * ldc, fill);
  blas::gemm(transA, transB, M, N, K, T{1.5}, A.data(), lda, B.data(), ldb, static_cast<T>(beta),
             C.data(), ldc);
  double err = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = beta == 0 ? 0.0 : beta * static_cast<double>(fill);
      for (int64_t k = 0; k < K; ++k)
        ref += 1.5 * at(A, transA, lda, i, k) * at(B, transB, ldb, k, j);
      const double d = std::abs(static_cast<double>(C[i * ldc + j]) - ref);
      err = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(err, d);
    }
  for (int64_t i = 0; i < M; ++i)  // the padding of C is untouched
    for (int64_t j = N; j < ldc; ++j)
      if (!(C[i * ldc + j] == fill || (std::isnan(C[i * ldc + j]) && std::isnan(fill))))
        return std::numeric_limits<double>::infinity();
  return err;
}

}  // namespace

class TestBlas : public QObject {
  Q_OBJECT

 private slots:
  void gemm_data() {
    QTest::addColumn<bool>("transA");
    QTest::addColumn<bool>("transB");
    QTest::addColumn<int>("M");
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("K");
    QTest::addColumn<double>("beta");
    const struct {
      const char* name;
      int M, N, K;
    } shapes[] = {{"row (gemv)", 1, 64, 64},
                  {"column (gemv)", 17, 1, 9},
                  {"1x1 (gemv)", 1, 1, 5},
                  {"matrix (gemm)", 7, 5, 3},
                  {"K = 0 row (gemm)", 1, 4, 0}};
    for (const auto& s : shapes)
      for (int t = 0; t < 4; ++t)
        for (double beta : {0.0, 0.5}) {
          const bool ta = t & 1, tb = t & 2;
          QTest::addRow("%s %s%s beta %g", s.name, ta ? "T" : "N", tb ? "T" : "N", beta)
              << ta << tb << s.M << s.N << s.K << beta;
        }
  }
  void gemm() {
    QFETCH(bool, transA);
    QFETCH(bool, transB);
    QFETCH(int, M);
    QFETCH(int, N);
    QFETCH(int, K);
    QFETCH(double, beta);
    QVERIFY(maxError<float>(transA, transB, M, N, K, beta) < 1e-4 * (K + 1));
    QVERIFY(maxError<double>(transA, transB, M, N, K, beta) < 1e-12 * (K + 1));
  }
};

QTEST_GUILESS_MAIN(TestBlas)
#include "test_blas.moc"
