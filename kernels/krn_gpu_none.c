/* krn_gpu_none.c - the GPU entry points when CUDA support is not built: every call says so. */
#include "kernels/krn_internal.h"

#include <stdio.h>

int krn_gpu_open(krn_gpu **out, char *msg, size_t msglen) {
  *out = NULL;
  if (msg && msglen) snprintf(msg, msglen, "CUDA support not built (SPOTLAB_CUDA off, or no nvcc at configure time)");
  return KRN_ENODEV;
}
void krn_gpu_close(krn_gpu *g) { (void)g; }
void krn__gpu_release(krn_gpu *g) { (void)g; }
void krn_gpu_get_info(const krn_gpu *g, krn_gpu_info *info) {
  (void)g;
  *info = (krn_gpu_info){{0}};
}
int krn_gpu_upload(krn_gpu *g, krn_job *job) { return KRN_ENODEV; }
int krn_gpu_download(krn_gpu *g, krn_job *job) { return KRN_ENODEV; }
int krn_gpu_run_whole(krn_gpu *g, krn_job *job, int impl, int reps, double *seconds) { return KRN_ENODEV; }
int krn_exec_gpu_create(krn_gpu *g, const char *name, int sms, double speed, krn_exec **out, int *sms_got) {
  *out = NULL;
  return KRN_ENODEV;
}
