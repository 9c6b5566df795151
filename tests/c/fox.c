/* Fox.glb from C, with the assets `sinew compress Fox.glb -o DIR` writes:
 * the walk, an inertialized switch to the run at 1 s, and dual-quaternion
 * skinning every frame; prints the skinned mesh's first vertex and sum.
 * Usage: fox SKELETON.sinewskl MESH.sinewmsh WALK.sinewcmp RUN.sinewcmp */
#include <stdalign.h>
#include <stdio.h>
#include "sinew.h"

enum { MAX_BYTES = 1 << 20, MAX_JOINTS = 256, MAX_BLOCKS = MAX_JOINTS / 4, MAX_VERTICES = 1 << 14 };
static alignas(16) uint8_t files[4][MAX_BYTES];
static sinew_soa_transform pose[MAX_BLOCKS], old[MAX_BLOCKS], old_prev[MAX_BLOCKS];
static sinew_inertial_block offsets[MAX_BLOCKS];
static sinew_float4x4 models[MAX_JOINTS];
static sinew_dual_quat palette[MAX_JOINTS];
static float skinned[MAX_VERTICES][3];

static size_t read_file(const char *path, uint8_t *out) {
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(out, 1, MAX_BYTES, f) : 0;
  if (f) fclose(f);
  return n;
}

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  size_t len[4];
  for (int i = 0; i < 4; i++) len[i] = read_file(argv[i + 1], files[i]);
  sinew_skeleton skel;
  sinew_mesh mesh;
  sinew_compressed_clip walk, run;
  sinew_status s = sinew_skeleton_load(files[0], len[0], &skel);
  if (!s) s = sinew_mesh_load(files[1], len[1], &mesh);
  if (!s) s = sinew_compressed_clip_load(files[2], len[2], &walk);
  if (!s) s = sinew_compressed_clip_load(files[3], len[3], &run);
  if (!s && (skel.joint_count > MAX_JOINTS || mesh.mesh.vertex_count > MAX_VERTICES)) return 3;
  const size_t n = s ? 0 : skel.soa_count, joints = s ? 0 : skel.joint_count;
  const float dt = 1.0f / 60.0f;
  sinew_skin_target target = {&skinned[0][0], NULL, NULL};
  sinew_skin_palette skin = {SINEW_SKIN_DQS, joints, NULL, palette, NULL, 0};
  for (int frame = 0; frame < 120 && !s; frame++) {
    float t = (float)frame * dt;
    s = sinew_compressed_clip_sample(frame < 60 ? &walk : &run, t, SINEW_TIME_LOOP, skel.rest_pose,
                                     n, pose, n);
    if (!s && frame == 60) {
      s = sinew_compressed_clip_sample(&walk, t, SINEW_TIME_LOOP, skel.rest_pose, n, old, n);
      if (!s)
        s = sinew_compressed_clip_sample(&walk, t - dt, SINEW_TIME_LOOP, skel.rest_pose, n,
                                         old_prev, n);
      if (!s) s = sinew_inertialize_start(offsets, old, old_prev, pose, pose, n, dt, 0.3f, NULL);
    }
    if (!s && frame >= 60)
      s = sinew_inertialize_apply(offsets, (float)(frame - 60) * dt, SINEW_DECAY_QUINTIC, 0.0f,
                                  pose, n);
    if (!s) s = sinew_skeleton_local_to_model(&skel, pose, n, NULL, models, joints);
    if (!s)
      s = sinew_skin_dqs_palette(models, joints, mesh.inverse_bind, mesh.joint_count, palette,
                                 joints);
    if (!s) s = sinew_skin(&skin, &mesh.mesh, &target);
  }
  if (s) {
    fprintf(stderr, "sinew: %s\n", sinew_status_string(s));
    return 1;
  }
  double sum = 0.0;
  for (size_t v = 0; v < mesh.mesh.vertex_count; v++)
    sum += (double)skinned[v][0] + skinned[v][1] + skinned[v][2];
  printf("vertices %zu\nvertex0 %.9g %.9g %.9g\nsum %.17g\n", mesh.mesh.vertex_count,
         skinned[0][0], skinned[0][1], skinned[0][2], sum);
  return 0;
}
