/* test_errors.c - the one error space (sim/errors.h): a code means one thing in every module.
 * The codes every module shares have one value everywhere, the codes of one module lie in its own
 * range and differ from all others, every module's strerror is the same function, and every code
 * has its own text. */
#include "kernels/krn.h"
#include "lab/lab.h"
#include "models/churn/churn.h"
#include "models/market/mkt.h"
#include "models/sched/sched.h"
#include "sim/sim.h"

#include <CUnit/CUnit.h>
#include <string.h>

_Static_assert((int)SIM_EIO == (int)MKT_EIO && (int)MKT_EIO == (int)KRN_EIO && (int)KRN_EIO == (int)LAB_EIO &&
                   (int)LAB_EIO == (int)CHURN_EIO,
               "one EIO");
_Static_assert((int)SIM_ENOMEM == (int)SCHED_ENOMEM && (int)SCHED_ENOMEM == (int)MKT_ENOMEM &&
                   (int)MKT_ENOMEM == (int)KRN_ENOMEM && (int)KRN_ENOMEM == (int)LAB_ENOMEM,
               "one ENOMEM");
_Static_assert((int)SIM_EINVAL == (int)SCHED_EINVAL && (int)SCHED_EINVAL == (int)MKT_EINVAL &&
                   (int)MKT_EINVAL == (int)KRN_EINVAL && (int)KRN_EINVAL == (int)LAB_EINVAL &&
                   (int)LAB_EINVAL == (int)CHURN_EINVAL,
               "one EINVAL");
_Static_assert((int)SIM_EFORMAT == (int)MKT_EFORMAT && (int)MKT_EFORMAT == (int)CHURN_EFORMAT, "one EFORMAT");
_Static_assert((int)SIM_ENOTFOUND == (int)MKT_ENOTFOUND && (int)MKT_ENOTFOUND == (int)CHURN_ENOTFOUND, "one ENOTFOUND");
_Static_assert((int)SIM_ECONFIG == (int)LAB_ECONFIG, "one ECONFIG");

typedef struct code {
  int v;
  const char *name;
} code;
static const code codes[] = {
    {SIM_ENOMEM, "ENOMEM"},         {SIM_EINVAL, "EINVAL"},         {SIM_EIO, "EIO"},
    {SIM_ECONFIG, "ECONFIG"},       {SIM_EFORMAT, "EFORMAT"},       {SIM_ENOTFOUND, "ENOTFOUND"},
    {SCHED_ESTATE, "SCHED_ESTATE"}, {SCHED_ETIME, "SCHED_ETIME"},   {KRN_ENODEV, "KRN_ENODEV"},
    {KRN_ECUDA, "KRN_ECUDA"},       {KRN_EVERIFY, "KRN_EVERIFY"},   {KRN_EFAILED, "KRN_EFAILED"},
    {KRN_ECANCEL, "KRN_ECANCEL"},   {LAB_ESYS, "LAB_ESYS"},         {LAB_EJOURNAL, "LAB_EJOURNAL"},
    {LAB_ESCHED, "LAB_ESCHED"},     {LAB_ETIMEOUT, "LAB_ETIMEOUT"},
};
#define NCODES (sizeof codes / sizeof codes[0])

static void test_one_space(void) {
  for (size_t i = 0; i < NCODES; i++) {
    CU_ASSERT(codes[i].v < 0);
    for (size_t k = 0; k < i; k++) CU_ASSERT(codes[i].v != codes[k].v); /* one meaning per code */
    const char *t = spotlab_strerror(codes[i].v);
    CU_ASSERT_STRING_NOT_EQUAL(t, "unknown error");
    for (size_t k = 0; k < i; k++) CU_ASSERT_STRING_NOT_EQUAL(t, spotlab_strerror(codes[k].v));
    /* every module names every code alike */
    CU_ASSERT_STRING_EQUAL(sim_strerror(codes[i].v), t);
    CU_ASSERT_STRING_EQUAL(sched_strerror(codes[i].v), t);
    CU_ASSERT_STRING_EQUAL(mkt_strerror(codes[i].v), t);
    CU_ASSERT_STRING_EQUAL(krn_strerror(codes[i].v), t);
    CU_ASSERT_STRING_EQUAL(lab_strerror(codes[i].v), t);
  }
  /* module codes sit in their module's range */
  CU_ASSERT(SCHED_ESTATE <= -100 && SCHED_ESTATE > -200 && SCHED_ETIME <= -100 && SCHED_ETIME > -200);
  CU_ASSERT(KRN_ENODEV <= -200 && KRN_ECANCEL > -300);
  CU_ASSERT(LAB_ESYS <= -300 && LAB_ETIMEOUT > -400);
  CU_ASSERT_STRING_EQUAL(spotlab_strerror(0), "success");
  CU_ASSERT_STRING_EQUAL(spotlab_strerror(-77), "unknown error");
}

static CU_TestInfo error_tests[] = {{"one error space across modules", test_one_space}, CU_TEST_INFO_NULL};
CU_SuiteInfo spotlab_suites[] = {{"errors", NULL, NULL, NULL, NULL, error_tests}, CU_SUITE_INFO_NULL};
