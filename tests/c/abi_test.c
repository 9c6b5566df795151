/* The C ABI test: links libsinew.a, runs a whole frame of the procedural
 * humanoid (sample two gaits, blend, FK, palettes, skinning) and prints the
 * numbers for tests/tests/c_abi.rs to compare with the Rust side; then
 * feeds every function bad input (NULL pointers, short and misaligned
 * buffers, garbage and bit-flipped bytes, forged handles, overlapping
 * buffers, NaN) and checks each status code. Exits 1 on the first wrong
 * status. Run under valgrind by the Rust test. */
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sinew.h"

#define CHECK(call, want)                                                     \
  do {                                                                        \
    sinew_status got_ = (call);                                               \
    if (got_ != (want)) {                                                     \
      fprintf(stderr, "%s:%d: %s returned %u (%s), wanted %s\n", __FILE__,    \
              __LINE__, #call, (unsigned)got_, sinew_status_string(got_),     \
              #want);                                                         \
      exit(1);                                                                \
    }                                                                         \
    checks++;                                                                 \
  } while (0)

static unsigned checks = 0;

/* Palettes, interleaved meshes and targets for sinew_skin / sinew_skin_strided
 * (C99 compound literals: each call gets its own struct). */
#define LBS(p, n) (&(sinew_skin_palette){SINEW_SKIN_LBS, (n), (p), NULL, NULL, 0})
#define DQS(p, n) (&(sinew_skin_palette){SINEW_SKIN_DQS, (n), NULL, (p), NULL, 0})
#define MIXED(l, d, n, m, mn) (&(sinew_skin_palette){SINEW_SKIN_MIXED, (n), (l), (d), (m), (mn)})
#define STRIDED(j, w, j1, w1, v, data, len, layout) \
  (&(sinew_strided_mesh){(v), (data), (len), *(layout), (j), (w), (j1), (w1)})
#define TARGET(data, len, layout) (&(sinew_strided_target){(data), (len), *(layout)})
#define INFLUENCES(j, w, j1, w1, v) (&(sinew_skin_mesh){(v), NULL, NULL, NULL, (j), (w), (j1), (w1)})

enum { VERTICES = 24, MAX_CLIP = 1 << 20 };

static alignas(16) uint8_t skeleton_bytes[SINEW_HUMANOID_SKELETON_SIZE];
static alignas(16) uint8_t walk_bytes[MAX_CLIP];
static alignas(16) uint8_t jog_bytes[MAX_CLIP];
static alignas(32) uint8_t scratch[MAX_CLIP + 64];
static sinew_soa_transform walk_pose[32], jog_pose[32], blended[32];
static sinew_float4x4 models[SINEW_HUMANOID_JOINT_COUNT];
static sinew_float3x4 lbs[SINEW_HUMANOID_JOINT_COUNT];
static sinew_dual_quat dqs[SINEW_HUMANOID_JOINT_COUNT];
static sinew_lbs_bind lbs_binds[SINEW_HUMANOID_JOINT_COUNT];
static sinew_dqs_binds dqs_binds[(SINEW_HUMANOID_JOINT_COUNT + 7) / 8];
static sinew_float3x4 lbs_prepared[SINEW_HUMANOID_JOINT_COUNT];
static sinew_dual_quat dqs_prepared[SINEW_HUMANOID_JOINT_COUNT];
static float positions[VERTICES][3], normals[VERTICES][3];
static uint16_t joints[VERTICES][4];
static float weights[VERTICES][4];
static float out_positions[VERTICES][3], out_normals[VERTICES][3];

static double sum_floats(const float *f, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += f[i];
  return s;
}

/* The same mesh as `mesh()` in tests/tests/c_abi.rs. */
static void make_mesh(void) {
  static const uint16_t js[4] = {13, 15, 0, 5};
  for (int v = 0; v < VERTICES; v++) {
    positions[v][0] = 0.1f * (float)v - 1.0f;
    positions[v][1] = 1.0f + 0.05f * (float)v;
    positions[v][2] = 0.02f * (float)v;
    normals[v][0] = 0.0f;
    normals[v][1] = (v % 2) ? 1.0f : 0.0f;
    normals[v][2] = (v % 2) ? 0.0f : 1.0f;
    for (int k = 0; k < 4; k++) joints[v][k] = js[(v + k) % 4];
    weights[v][0] = 0.4f;
    weights[v][1] = 0.3f;
    weights[v][2] = 0.2f;
    weights[v][3] = 0.1f;
  }
}

static void frame(void) {
  size_t written = 0, size = 0;
  sinew_skeleton skel;
  sinew_clip walk, jog;

  CHECK(sinew_humanoid_skeleton_write(skeleton_bytes, sizeof skeleton_bytes, &written),
        SINEW_STATUS_OK);
  CHECK(sinew_skeleton_load(skeleton_bytes, written, &skel), SINEW_STATUS_OK);
  printf("joint_count %u\nsoa_count %u\n", skel.joint_count, skel.soa_count);

  size_t head = 0;
  CHECK(sinew_skeleton_find_joint(&skel, "head", 4, &head), SINEW_STATUS_OK);
  const char *name = NULL;
  size_t name_len = 0;
  CHECK(sinew_skeleton_joint_name(&skel, 15, &name, &name_len), SINEW_STATUS_OK);
  printf("head %zu\njoint15 %.*s\n", head, (int)name_len, name);

  CHECK(sinew_humanoid_clip_size(&skel, SINEW_GAIT_WALK, 30.0f, &size), SINEW_STATUS_OK);
  CHECK(sinew_humanoid_clip_write(&skel, SINEW_GAIT_WALK, 30.0f, walk_bytes, sizeof walk_bytes,
                                  &written),
        SINEW_STATUS_OK);
  if (written != size) exit(1);
  CHECK(sinew_clip_load(walk_bytes, written, &walk), SINEW_STATUS_OK);
  CHECK(sinew_humanoid_clip_write(&skel, SINEW_GAIT_JOG, 30.0f, jog_bytes, sizeof jog_bytes,
                                  &written),
        SINEW_STATUS_OK);
  CHECK(sinew_clip_load(jog_bytes, written, &jog), SINEW_STATUS_OK);
  printf("walk_frames %u\nwalk_duration %.9g\n", walk.frame_count, (double)walk.duration);

  CHECK(sinew_clip_sample(&walk, 0.37f, SINEW_TIME_LOOP, walk_pose, skel.soa_count),
        SINEW_STATUS_OK);
  CHECK(sinew_clip_sample(&jog, 1.9f, SINEW_TIME_LOOP, jog_pose, skel.soa_count),
        SINEW_STATUS_OK);
  sinew_blend_layer layers[2] = {
      {walk_pose, skel.soa_count, 0.7f, NULL, 0},
      {jog_pose, skel.soa_count, 0.3f, NULL, 0},
  };
  CHECK(sinew_pose_blend(layers, 2, NULL, 0, skel.rest_pose, skel.soa_count,
                         SINEW_DEFAULT_BLEND_THRESHOLD, blended, skel.soa_count),
        SINEW_STATUS_OK);
  CHECK(sinew_skeleton_local_to_model(&skel, blended, skel.soa_count, NULL, models,
                                      skel.joint_count),
        SINEW_STATUS_OK);
  printf("pose_sum %.17g\n", sum_floats(&blended[0].translation[0][0], 40 * skel.soa_count));
  printf("model_sum %.17g\n", sum_floats(&models[0].cols[0][0], 16 * skel.joint_count));
  printf("hand_l_position %.9g %.9g %.9g\n", (double)models[15].cols[3][0],
         (double)models[15].cols[3][1], (double)models[15].cols[3][2]);

  CHECK(sinew_skin_lbs_palette(models, skel.joint_count, skel.inverse_bind, skel.joint_count, lbs,
                               skel.joint_count),
        SINEW_STATUS_OK);
  CHECK(sinew_skin_dqs_palette(models, skel.joint_count, skel.inverse_bind, skel.joint_count, dqs,
                               skel.joint_count),
        SINEW_STATUS_OK);
  printf("lbs_palette_sum %.17g\n", sum_floats(&lbs[0].rows[0][0], 12 * skel.joint_count));
  printf("dqs_palette_sum %.17g\n", sum_floats(&dqs[0].real[0], 8 * skel.joint_count));

  /* The palettes again with the inverse binds prepared once. */
  size_t dqs_blocks = sinew_skin_dqs_binds_count(skel.joint_count);
  if (dqs_blocks != sizeof dqs_binds / sizeof dqs_binds[0]) {
    fprintf(stderr, "sinew_skin_dqs_binds_count(%u) = %zu\n", skel.joint_count, dqs_blocks);
    exit(1);
  }
  CHECK(sinew_skin_lbs_binds_prepare(skel.inverse_bind, skel.joint_count, lbs_binds,
                                     skel.joint_count),
        SINEW_STATUS_OK);
  CHECK(sinew_skin_lbs_palette_prepared(models, skel.joint_count, lbs_binds, skel.joint_count,
                                        lbs_prepared, skel.joint_count),
        SINEW_STATUS_OK);
  CHECK(sinew_skin_dqs_binds_prepare(skel.inverse_bind, skel.joint_count, dqs_binds, dqs_blocks),
        SINEW_STATUS_OK);
  CHECK(sinew_skin_dqs_palette_prepared(models, skel.joint_count, dqs_binds, dqs_blocks,
                                        dqs_prepared, skel.joint_count),
        SINEW_STATUS_OK);
  printf("lbs_prepared_sum %.17g\n", sum_floats(&lbs_prepared[0].rows[0][0], 12 * skel.joint_count));
  printf("dqs_prepared_sum %.17g\n", sum_floats(&dqs_prepared[0].real[0], 8 * skel.joint_count));

  make_mesh();
  CHECK(sinew_skin_check_influences(INFLUENCES(&joints[0][0], &weights[0][0], NULL, NULL, VERTICES), skel.joint_count),
        SINEW_STATUS_OK);
  sinew_skin_mesh mesh = {VERTICES, &positions[0][0], &normals[0][0], NULL,
                          &joints[0][0], &weights[0][0], NULL, NULL};
  sinew_skin_target target = {&out_positions[0][0], &out_normals[0][0], NULL};
  sinew_skin_palette unknown = {7, skel.joint_count, lbs, dqs, NULL, 0};
  CHECK(sinew_skin(&unknown, &mesh, &target), SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_skin(NULL, &mesh, &target), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_skin(LBS(lbs, skel.joint_count), &mesh, &target), SINEW_STATUS_OK);
  printf("lbs_positions %.17g\nlbs_normals %.17g\n", sum_floats(&out_positions[0][0], 3 * VERTICES),
         sum_floats(&out_normals[0][0], 3 * VERTICES));
  CHECK(sinew_skin(DQS(dqs, skel.joint_count), &mesh, &target), SINEW_STATUS_OK);
  printf("dqs_positions %.17g\ndqs_normals %.17g\n", sum_floats(&out_positions[0][0], 3 * VERTICES),
         sum_floats(&out_normals[0][0], 3 * VERTICES));

  /* The same mesh prepared in blocks once, then skinned from them. */
  static sinew_vertex_block blocks[(VERTICES + 3) / 4];
  static float blocks_positions[VERTICES][3], blocks_normals[VERTICES][3];
  sinew_skin_target blocks_target = {&blocks_positions[0][0], &blocks_normals[0][0], NULL};
  size_t block_count = sinew_skin_blocks_count(VERTICES);
  if (block_count != sizeof blocks / sizeof blocks[0]) {
    fprintf(stderr, "sinew_skin_blocks_count(%d) = %zu\n", VERTICES, block_count);
    exit(1);
  }
  CHECK(sinew_skin_blocks_prepare(&mesh, skel.joint_count, blocks, block_count - 1),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_blocks_prepare(NULL, skel.joint_count, blocks, block_count),
        SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_skin_blocks_prepare(&mesh, 1, blocks, block_count), SINEW_STATUS_INVALID_INFLUENCE);
  CHECK(sinew_skin_blocks_prepare(&mesh, skel.joint_count, blocks, block_count), SINEW_STATUS_OK);
  CHECK(sinew_skin_blocks_lbs(lbs, 1, blocks, VERTICES, &blocks_target),
        SINEW_STATUS_INVALID_INFLUENCE);
  CHECK(sinew_skin_blocks_lbs(NULL, skel.joint_count, blocks, VERTICES, &blocks_target),
        SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_skin_blocks_lbs(lbs, skel.joint_count, blocks, VERTICES, &blocks_target),
        SINEW_STATUS_OK);
  printf("blocks_lbs_positions %.17g\nblocks_lbs_normals %.17g\n",
         sum_floats(&blocks_positions[0][0], 3 * VERTICES),
         sum_floats(&blocks_normals[0][0], 3 * VERTICES));

  /* Eight influences (joints1/weights1 set): slot 3's weight split between
   * slot 3 and slot 4 on the same joint skins as the four above. */
  static uint16_t joints1[VERTICES][4];
  static float weights8[VERTICES][4], weights1[VERTICES][4], out8[VERTICES][3];
  for (int v = 0; v < VERTICES; v++) {
    memcpy(weights8[v], weights[v], sizeof weights8[v]);
    weights8[v][3] = 0.5f * weights[v][3];
    joints1[v][0] = joints[v][3];
    weights1[v][0] = 0.5f * weights[v][3];
  }
  sinew_skin_mesh mesh8 = {VERTICES,        &positions[0][0], &normals[0][0], NULL,
                           &joints[0][0],   &weights8[0][0],  &joints1[0][0], &weights1[0][0]};
  sinew_skin_target target8 = {&out8[0][0], NULL, NULL};
  CHECK(sinew_skin(DQS(dqs, skel.joint_count), &mesh8, &target8), SINEW_STATUS_OK);
  for (int v = 0; v < VERTICES; v++) {
    for (int c = 0; c < 3; c++) {
      if (fabsf(out8[v][c] - out_positions[v][c]) > 1e-5f * (1.0f + fabsf(out_positions[v][c]))) {
        fprintf(stderr, "eight influences: vertex %d[%d] %g, four: %g\n", v, c, (double)out8[v][c],
                (double)out_positions[v][c]);
        exit(1);
      }
    }
  }
  CHECK(sinew_skin_check_influences(INFLUENCES(&joints[0][0], &weights8[0][0], &joints1[0][0], &weights1[0][0], VERTICES), skel.joint_count),
        SINEW_STATUS_OK);
  CHECK(sinew_skin_check_influences(INFLUENCES(&joints[0][0], &weights8[0][0], &joints1[0][0], NULL, VERTICES), skel.joint_count),
        SINEW_STATUS_NULL_PARAMETER);
  /* Slots 0-3 alone no longer sum to 1; a slot-4 index past the palette. */
  CHECK(sinew_skin_check_influences(INFLUENCES(&joints[0][0], &weights8[0][0], NULL, NULL, VERTICES), skel.joint_count),
        SINEW_STATUS_INVALID_INFLUENCE);
  joints1[5][0] = (uint16_t)skel.joint_count;
  CHECK(sinew_skin_check_influences(INFLUENCES(&joints[0][0], &weights8[0][0], &joints1[0][0], &weights1[0][0], VERTICES), skel.joint_count),
        SINEW_STATUS_INVALID_INFLUENCE);
  CHECK(sinew_skin(DQS(dqs, skel.joint_count), &mesh8, &target8), SINEW_STATUS_INVALID_INFLUENCE);
  mesh8.weights1 = NULL;
  CHECK(sinew_skin(DQS(dqs, skel.joint_count), &mesh8, &target8), SINEW_STATUS_NULL_PARAMETER);

  /* Vertex order by influence count: a permutation, fewest slots first,
   * part sizes summing to the vertex count; bad calls write nothing. */
  static uint32_t order[VERTICES];
  uint32_t parts[9] = {0};
  CHECK(sinew_skin_influence_order(&weights8[0][0], &weights1[0][0], VERTICES, order, VERTICES, parts),
        SINEW_STATUS_OK);
  {
    uint32_t total = 0, last = 0;
    static int seen[VERTICES];
    for (int k = 0; k < 9; k++) total += parts[k];
    if (total != VERTICES) { fprintf(stderr, "influence order: parts sum to %u\n", total); exit(1); }
    for (int i = 0; i < VERTICES; i++) {
      uint32_t v = order[i], used = 0;
      if (v >= VERTICES || seen[v]++) { fprintf(stderr, "influence order: not a permutation\n"); exit(1); }
      for (int s = 0; s < 4; s++) if (weights8[v][s] != 0.0f) used = (uint32_t)s + 1;
      for (int s = 0; s < 4; s++) if (weights1[v][s] != 0.0f) used = 5 + (uint32_t)s;
      if (used < last) { fprintf(stderr, "influence order: not sorted at %d\n", i); exit(1); }
      last = used;
    }
  }
  order[0] = 12345;
  CHECK(sinew_skin_influence_order(&weights8[0][0], NULL, VERTICES, order, VERTICES - 1, NULL),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_influence_order(NULL, NULL, VERTICES, order, VERTICES, NULL), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_skin_influence_order(&weights8[0][0], NULL, VERTICES, (uint32_t *)&weights8[0][0], VERTICES, NULL),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  if (order[0] != 12345) { fprintf(stderr, "influence order: written on error\n"); exit(1); }

  /* Mixing: walk as a ramped one-shot unit, jog at fatigue 0.3, the rest
   * pose as idle; then a cross-fade and an inertialized switch. */
  float w = 0.0f;
  CHECK(sinew_mix_ramp_weight(SINEW_RAMP_LINEAR, 5, 3, 20, &w), SINEW_STATUS_OK);
  printf("ramp_weight %.9g\n", (double)w);
  sinew_blend_layer unit = {walk_pose, skel.soa_count, w, NULL, 0};
  sinew_blend_layer tired = {jog_pose, skel.soa_count, 0.3f, NULL, 0};
  sinew_blend_layer idle = {skel.rest_pose, skel.soa_count, 1.0f, NULL, 0};
  static sinew_soa_transform mixed[32], faded[32], prev_walk[32], prev_jog[32];
  CHECK(sinew_pose_mix(&unit, 1, &tired, &idle, skel.rest_pose, skel.soa_count,
                       SINEW_MIX_QUATERNION, mixed, skel.soa_count),
        SINEW_STATUS_OK);
  printf("mix_sum %.17g\n", sum_floats(&mixed[0].translation[0][0], 40 * skel.soa_count));
  CHECK(sinew_pose_crossfade(walk_pose, jog_pose, skel.soa_count, 0.25f, faded, skel.soa_count),
        SINEW_STATUS_OK);
  printf("crossfade_sum %.17g\n", sum_floats(&faded[0].translation[0][0], 40 * skel.soa_count));
  static sinew_inertial_block state[32];
  float longest = 0.0f;
  CHECK(sinew_clip_sample(&walk, 0.37f - 1.0f / 60.0f, SINEW_TIME_LOOP, prev_walk, skel.soa_count),
        SINEW_STATUS_OK);
  CHECK(sinew_clip_sample(&jog, 1.9f - 1.0f / 60.0f, SINEW_TIME_LOOP, prev_jog, skel.soa_count),
        SINEW_STATUS_OK);
  CHECK(sinew_inertialize_start(state, walk_pose, prev_walk, jog_pose, prev_jog, skel.soa_count,
                                1.0f / 60.0f, 0.5f, &longest),
        SINEW_STATUS_OK);
  memcpy(faded, jog_pose, sizeof(sinew_soa_transform) * skel.soa_count);
  CHECK(sinew_inertialize_apply(state, 0.1f, SINEW_DECAY_QUINTIC, 0.0f, faded, skel.soa_count),
        SINEW_STATUS_OK);
  printf("inertialized_sum %.17g\nlongest %.9g\n",
         sum_floats(&faded[0].translation[0][0], 40 * skel.soa_count), (double)longest);
  CHECK(sinew_pose_mix(&unit, 1, NULL, NULL, skel.rest_pose, skel.soa_count, 5, mixed,
                       skel.soa_count),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_pose_mix(&unit, 1, NULL, NULL, skel.rest_pose, skel.soa_count,
                       SINEW_MIX_QUATERNION, walk_pose, skel.soa_count),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  CHECK(sinew_pose_mix(&unit, SINEW_MAX_MIX_UNITS + 1, NULL, NULL, skel.rest_pose, skel.soa_count,
                       SINEW_MIX_QUATERNION, mixed, skel.soa_count),
        SINEW_STATUS_TOO_MANY_LAYERS);
  CHECK(sinew_mix_ramp_weight(SINEW_RAMP_SMOOTH, 11, 0, 20, &w), SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_pose_crossfade(walk_pose, jog_pose, skel.soa_count, 1.5f, faded, skel.soa_count),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_inertialize_start(state, walk_pose, prev_walk, jog_pose, prev_jog, skel.soa_count,
                                0.0f, 0.5f, NULL),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_inertialize_apply(state, NAN, SINEW_DECAY_QUINTIC, 0.0f, faded, skel.soa_count),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_inertialize_apply(state, 0.1f, SINEW_DECAY_SPRING, -1.0f, faded, skel.soa_count),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_inertialize_apply(state, 0.1f, 9, 0.0f, faded, skel.soa_count),
        SINEW_STATUS_INVALID_ARGUMENT);

  /* A two-frame clip written from C: sampling half-way is the cross-fade. */
  static sinew_soa_transform keys[64], half[32];
  static alignas(16) uint8_t two_frames[16384];
  memcpy(keys, walk_pose, sizeof(sinew_soa_transform) * skel.soa_count);
  memcpy(keys + skel.soa_count, jog_pose, sizeof(sinew_soa_transform) * skel.soa_count);
  size_t clip_size = 0, clip_written = 0;
  CHECK(sinew_clip_container_size(skel.soa_count, 2, 3, &clip_size), SINEW_STATUS_OK);
  CHECK(sinew_clip_write(keys, 2 * skel.soa_count, skel.soa_count, 10.0f, "mid", 3, two_frames,
                         sizeof two_frames, &clip_written),
        SINEW_STATUS_OK);
  if (clip_written != clip_size) exit(1);
  sinew_clip two;
  CHECK(sinew_clip_load(two_frames, clip_written, &two), SINEW_STATUS_OK);
  CHECK(sinew_clip_sample(&two, 0.05f, SINEW_TIME_CLAMP, half, skel.soa_count), SINEW_STATUS_OK);
  CHECK(sinew_pose_crossfade(walk_pose, jog_pose, skel.soa_count, 0.5f, faded, skel.soa_count),
        SINEW_STATUS_OK);
  if (memcmp(half, faded, sizeof(sinew_soa_transform) * skel.soa_count) != 0) exit(1);
  CHECK(sinew_clip_write(keys, 2 * skel.soa_count - 1, skel.soa_count, 10.0f, "mid", 3,
                         two_frames, sizeof two_frames, &clip_written),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_clip_write(keys, 2 * skel.soa_count, skel.soa_count, NAN, "mid", 3, two_frames,
                         sizeof two_frames, &clip_written),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_clip_write(keys, 2 * skel.soa_count, skel.soa_count, 10.0f, "mid", 3, two_frames,
                         clip_size - 1, &clip_written),
        SINEW_STATUS_BUFFER_TOO_SMALL);
  CHECK(sinew_clip_container_size(SIZE_MAX / 2, 4, 0, &clip_size), SINEW_STATUS_INVALID_ARGUMENT);

  /* LBS/DQS mix: 0 everywhere is LBS exactly, 1 is DQS within rounding. */
  static float mix[VERTICES], mixed_positions[VERTICES][3];
  sinew_skin_target mixed_target = {&mixed_positions[0][0], NULL, NULL};
  CHECK(sinew_skin(MIXED(lbs, dqs, skel.joint_count, mix, VERTICES), &mesh, &mixed_target),
        SINEW_STATUS_OK);
  CHECK(sinew_skin(LBS(lbs, skel.joint_count), &mesh, &target), SINEW_STATUS_OK);
  if (memcmp(mixed_positions, out_positions, sizeof mixed_positions) != 0) exit(1);
  for (int v = 0; v < VERTICES; v++) mix[v] = 1.0f;
  CHECK(sinew_skin(MIXED(lbs, dqs, skel.joint_count, mix, VERTICES), &mesh, &mixed_target),
        SINEW_STATUS_OK);
  CHECK(sinew_skin(DQS(dqs, skel.joint_count), &mesh, &target), SINEW_STATUS_OK);
  for (int v = 0; v < VERTICES; v++)
    for (int k = 0; k < 3; k++)
      if (fabsf(mixed_positions[v][k] - out_positions[v][k]) > 1e-5f) exit(1);
  mix[7] = 1.5f;
  CHECK(sinew_skin(MIXED(lbs, dqs, skel.joint_count, mix, VERTICES), &mesh, &mixed_target),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_skin(MIXED(lbs, dqs, skel.joint_count, mix, VERTICES - 1), &mesh, &mixed_target),
        SINEW_STATUS_BAD_LENGTH);

  /* The same DQS skin over an interleaved buffer: position, normal, uv. */
  static float src[VERTICES * 8], dst[VERTICES * 8];
  for (int v = 0; v < VERTICES; v++) {
    memcpy(&src[v * 8], positions[v], sizeof positions[v]);
    memcpy(&src[v * 8 + 3], normals[v], sizeof normals[v]);
    src[v * 8 + 6] = dst[v * 8 + 6] = 0.25f * (float)v;
    src[v * 8 + 7] = dst[v * 8 + 7] = -1.0f;
  }
  sinew_vertex_layout layout = {8, 0, 3, SINEW_NO_ATTRIBUTE};
  CHECK(sinew_skin_strided(DQS(dqs, skel.joint_count), STRIDED(&joints[0][0], &weights[0][0], NULL, NULL, VERTICES, src, VERTICES * 8, &layout), TARGET(dst, VERTICES * 8, &layout)),
        SINEW_STATUS_OK);
  for (int v = 0; v < VERTICES; v++)
    if (memcmp(&dst[v * 8], out_positions[v], sizeof out_positions[v]) != 0 ||
        memcmp(&dst[v * 8 + 3], out_normals[v], sizeof out_normals[v]) != 0 ||
        dst[v * 8 + 6] != 0.25f * (float)v || dst[v * 8 + 7] != -1.0f)
      exit(1);
  CHECK(sinew_skin_strided(LBS(lbs, skel.joint_count), STRIDED(&joints[0][0], &weights[0][0], NULL, NULL, VERTICES, src, VERTICES * 8, &layout), TARGET(dst, VERTICES * 8, &layout)),
        SINEW_STATUS_OK);
  printf("strided_lbs_positions_0 %.9g\n", (double)dst[0]);

  /* Eight influences over the interleaved buffer: the split slot 3 of the
   * eight-influence test above (slot 4 on a valid joint again) skins as the
   * four do; one array of the pair alone, a bad slot-4 index and `dst` over
   * `weights1` are refused with `dst` untouched. */
  joints1[5][0] = joints[5][3];
  static float dst8[VERTICES * 8];
  for (int d = 0; d < 2; d++) {
    memcpy(dst8, dst, sizeof dst8);
    sinew_status s8 =
        d == 0 ? sinew_skin_strided(LBS(lbs, skel.joint_count), STRIDED(&joints[0][0], &weights8[0][0], &joints1[0][0], &weights1[0][0], VERTICES, src, VERTICES * 8, &layout), TARGET(dst8, VERTICES * 8, &layout))
               : sinew_skin_strided(DQS(dqs, skel.joint_count), STRIDED(&joints[0][0], &weights8[0][0], &joints1[0][0], &weights1[0][0], VERTICES, src, VERTICES * 8, &layout), TARGET(dst8, VERTICES * 8, &layout));
    CHECK(s8, SINEW_STATUS_OK);
    static float four[VERTICES * 8];
    memcpy(four, dst, sizeof four);
    if (d == 1)
      CHECK(sinew_skin_strided(DQS(dqs, skel.joint_count), STRIDED(&joints[0][0], &weights[0][0], NULL, NULL, VERTICES, src, VERTICES * 8, &layout), TARGET(four, VERTICES * 8, &layout)),
            SINEW_STATUS_OK);
    for (int i = 0; i < VERTICES * 8; i++)
      if (fabsf(dst8[i] - four[i]) > 1e-5f * (1.0f + fabsf(four[i]))) {
        fprintf(stderr, "strided eight influences (%s): float %d %g, four: %g\n",
                d == 0 ? "lbs" : "dqs", i, (double)dst8[i], (double)four[i]);
        exit(1);
      }
  }
  memcpy(dst8, dst, sizeof dst8);
  CHECK(sinew_skin_strided(LBS(lbs, skel.joint_count), STRIDED(&joints[0][0], &weights8[0][0], &joints1[0][0], NULL, VERTICES, src, VERTICES * 8, &layout), TARGET(dst8, VERTICES * 8, &layout)),
        SINEW_STATUS_NULL_PARAMETER);
  joints1[5][0] = (uint16_t)skel.joint_count;
  CHECK(sinew_skin_strided(DQS(dqs, skel.joint_count), STRIDED(&joints[0][0], &weights8[0][0], &joints1[0][0], &weights1[0][0], VERTICES, src, VERTICES * 8, &layout), TARGET(dst8, VERTICES * 8, &layout)),
        SINEW_STATUS_INVALID_INFLUENCE);
  joints1[5][0] = joints[5][3];
  if (memcmp(dst8, dst, sizeof dst8) != 0) exit(1);
  static float weights1_before[VERTICES][4];
  memcpy(weights1_before, weights1, sizeof weights1);
  sinew_vertex_layout positions_only = {4, 0, SINEW_NO_ATTRIBUTE, SINEW_NO_ATTRIBUTE};
  CHECK(sinew_skin_strided(LBS(lbs, skel.joint_count), STRIDED(&joints[0][0], &weights8[0][0], &joints1[0][0], &weights1[0][0], VERTICES, src, VERTICES * 8, &layout), TARGET(&weights1[0][0], VERTICES * 4, &positions_only)),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  if (memcmp(weights1_before, weights1, sizeof weights1) != 0) exit(1);
  sinew_vertex_layout bad = {0, 0, 3, SINEW_NO_ATTRIBUTE};
  CHECK(sinew_skin_strided(LBS(lbs, skel.joint_count), STRIDED(&joints[0][0], &weights[0][0], NULL, NULL, VERTICES, src, VERTICES * 8, &layout), TARGET(dst, VERTICES * 8, &bad)),
        SINEW_STATUS_BAD_LENGTH);
  bad.stride = 8;
  bad.normal = 1; /* overlaps the position */
  CHECK(sinew_skin_strided(LBS(lbs, skel.joint_count), STRIDED(&joints[0][0], &weights[0][0], NULL, NULL, VERTICES, src, VERTICES * 8, &layout), TARGET(dst, VERTICES * 8, &bad)),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_strided(LBS(lbs, skel.joint_count), STRIDED(&joints[0][0], &weights[0][0], NULL, NULL, VERTICES, src, VERTICES * 8 - 1, &layout), TARGET(dst, VERTICES * 8, &layout)),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_strided(LBS(lbs, skel.joint_count), STRIDED(&joints[0][0], &weights[0][0], NULL, NULL, VERTICES, src, VERTICES * 8, &layout), TARGET(src, VERTICES * 8, &layout)),
        SINEW_STATUS_OVERLAPPING_BUFFERS);

  /* The range update after the whole-skeleton pass changes nothing. */
  sinew_float4x4 before = models[20];
  CHECK(sinew_skeleton_local_to_model_range(&skel, blended, skel.soa_count, NULL, 15, 27, models,
                                            skel.joint_count),
        SINEW_STATUS_OK);
  if (memcmp(&before, &models[20], sizeof before) != 0) exit(1);
}

/* A three-joint arm given children first, built, loaded and posed. */
static void build(void) {
  static alignas(16) uint8_t bytes[1024];
  static const float id_rot[4] = {0, 0, 0, 1}, one[3] = {1, 1, 1};
  sinew_joint_def defs[3];
  memset(defs, 0, sizeof defs);
  const char *names[3] = {"hand", "shoulder", "elbow"};
  const uint16_t parents[3] = {2, SINEW_NO_PARENT, 1};
  for (int j = 0; j < 3; j++) {
    defs[j].name = names[j];
    defs[j].name_len = strlen(names[j]);
    defs[j].parent = parents[j];
    defs[j].translation[0] = j == 1 ? 0.0f : 0.5f;
    memcpy(defs[j].rotation, id_rot, sizeof id_rot);
    memcpy(defs[j].scale, one, sizeof one);
  }
  size_t size = 0, written = 0;
  uint16_t remap[3];
  CHECK(sinew_skeleton_build_size(defs, 3, &size), SINEW_STATUS_OK);
  CHECK(sinew_skeleton_build(defs, 3, bytes, sizeof bytes, remap, 3, &written), SINEW_STATUS_OK);
  if (written != size || remap[1] != 0 || remap[2] != 1 || remap[0] != 2) exit(1);
  sinew_skeleton arm;
  CHECK(sinew_skeleton_load(bytes, written, &arm), SINEW_STATUS_OK);
  static sinew_float4x4 m[3];
  CHECK(sinew_skeleton_local_to_model(&arm, arm.rest_pose, 1, NULL, m, 3), SINEW_STATUS_OK);
  printf("built_hand_x %.9g\n", (double)m[2].cols[3][0]);

  /* Builder errors. */
  CHECK(sinew_skeleton_build(defs, 0, bytes, sizeof bytes, NULL, 0, &written),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_skeleton_build(defs, 3, bytes, size - 16, NULL, 0, &written),
        SINEW_STATUS_BUFFER_TOO_SMALL);
  CHECK(sinew_skeleton_build(defs, 3, bytes, sizeof bytes, remap, 2, &written),
        SINEW_STATUS_BAD_LENGTH);
  defs[1].parent = 0; /* shoulder -> hand -> elbow -> shoulder */
  CHECK(sinew_skeleton_build(defs, 3, bytes, sizeof bytes, NULL, 0, &written),
        SINEW_STATUS_INVALID_ARGUMENT);
  defs[1].parent = 3;
  CHECK(sinew_skeleton_build(defs, 3, bytes, sizeof bytes, NULL, 0, &written),
        SINEW_STATUS_INVALID_ARGUMENT);
  defs[1].parent = SINEW_NO_PARENT;
  defs[0].translation[1] = NAN;
  CHECK(sinew_skeleton_build(defs, 3, bytes, sizeof bytes, NULL, 0, &written),
        SINEW_STATUS_INVALID_ARGUMENT);
  defs[0].translation[1] = 0.0f;
  defs[2].scale[0] = 0.0f;
  CHECK(sinew_skeleton_build(defs, 3, bytes, sizeof bytes, NULL, 0, &written),
        SINEW_STATUS_SINGULAR_TRANSFORM);
  defs[2].scale[0] = 1.0f;
  /* Rest rotations must be unit quaternions: zero and (2, 0, 0, 0) are refused. */
  memset(defs[2].rotation, 0, sizeof defs[2].rotation);
  CHECK(sinew_skeleton_build(defs, 3, bytes, sizeof bytes, NULL, 0, &written),
        SINEW_STATUS_INVALID_ARGUMENT);
  defs[2].rotation[0] = 2.0f;
  CHECK(sinew_skeleton_build(defs, 3, bytes, sizeof bytes, NULL, 0, &written),
        SINEW_STATUS_INVALID_ARGUMENT);
  memcpy(defs[2].rotation, id_rot, sizeof id_rot);
  defs[0].name = "\xff\xfe";
  defs[0].name_len = 2;
  CHECK(sinew_skeleton_build_size(defs, 3, &size), SINEW_STATUS_INVALID_ARGUMENT);
  defs[0].name = NULL;
  CHECK(sinew_skeleton_build_size(defs, 3, &size), SINEW_STATUS_NULL_PARAMETER);
  defs[0].name = (const char *)bytes;
  defs[0].name_len = 4;
  CHECK(sinew_skeleton_build(defs, 3, bytes, sizeof bytes, NULL, 0, &written),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
}

static void bad_input(void) {
  size_t written = 0, size = 0, joint = 0;
  sinew_skeleton skel, untouched;
  sinew_clip walk;
  const sinew_status OK = SINEW_STATUS_OK;

  /* NULL pointers and empty input. */
  CHECK(sinew_skeleton_load(NULL, 100, &skel), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_skeleton_load(skeleton_bytes, sizeof skeleton_bytes, NULL),
        SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_skeleton_load(skeleton_bytes, 0, &skel), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_humanoid_skeleton_write(NULL, 0, &written), SINEW_STATUS_BUFFER_TOO_SMALL);
  CHECK(sinew_humanoid_skeleton_write(skeleton_bytes, sizeof skeleton_bytes, NULL),
        SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_skeleton_find_joint(NULL, "head", 4, &joint), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_clip_sample(NULL, 0.0f, SINEW_TIME_LOOP, walk_pose, 18),
        SINEW_STATUS_NULL_PARAMETER);

  /* Short buffers. */
  CHECK(sinew_humanoid_skeleton_write(scratch, 100, &written), SINEW_STATUS_BUFFER_TOO_SMALL);
  CHECK(sinew_humanoid_skeleton_write(skeleton_bytes, sizeof skeleton_bytes, &written), OK);
  CHECK(sinew_skeleton_load(skeleton_bytes, written, &skel), OK);
  CHECK(sinew_skeleton_load(skeleton_bytes, 47, &untouched), SINEW_STATUS_INVALID_DATA);
  CHECK(sinew_skeleton_load(skeleton_bytes, written - 16, &untouched), SINEW_STATUS_INVALID_DATA);
  CHECK(sinew_humanoid_clip_size(&skel, SINEW_GAIT_RUN, 60.0f, &size), OK);
  CHECK(sinew_humanoid_clip_write(&skel, SINEW_GAIT_RUN, 60.0f, walk_bytes, size - 1, &written),
        SINEW_STATUS_BUFFER_TOO_SMALL);
  CHECK(sinew_humanoid_clip_write(&skel, SINEW_GAIT_RUN, 60.0f, walk_bytes, size, &written), OK);
  CHECK(sinew_clip_load(walk_bytes, written, &walk), OK);
  CHECK(sinew_clip_sample(&walk, 0.1f, SINEW_TIME_CLAMP, walk_pose, skel.soa_count - 1),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skeleton_local_to_model(&skel, walk_pose, skel.soa_count, NULL, models, 3),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_lbs_palette(models, 70, skel.inverse_bind, 69, lbs, 70),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_lbs_binds_prepare(skel.inverse_bind, 70, lbs_binds, 69),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_lbs_palette_prepared(models, 70, lbs_binds, 69, lbs, 70),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_dqs_binds_prepare(skel.inverse_bind, 70, dqs_binds, 8),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_dqs_palette_prepared(models, 70, dqs_binds, 8, dqs, 70),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_skin_dqs_palette_prepared(models, 70, NULL, 9, dqs, 70),
        SINEW_STATUS_NULL_PARAMETER);

  /* Misaligned buffers. */
  memcpy(scratch + 8, skeleton_bytes, SINEW_HUMANOID_SKELETON_SIZE);
  CHECK(sinew_skeleton_load(scratch + 8, SINEW_HUMANOID_SKELETON_SIZE, &untouched),
        SINEW_STATUS_MISALIGNED);
  CHECK(sinew_clip_sample(&walk, 0.1f, SINEW_TIME_LOOP,
                          (sinew_soa_transform *)(void *)(scratch + 4), skel.soa_count),
        SINEW_STATUS_MISALIGNED);
  CHECK(sinew_humanoid_skeleton_write(scratch + 1, sizeof scratch - 1, &written),
        SINEW_STATUS_MISALIGNED);
  /* Prepared binds are 32-byte aligned; 16 is not enough. */
  CHECK(sinew_skin_lbs_binds_prepare(skel.inverse_bind, 70,
                                     (sinew_lbs_bind *)(void *)(scratch + 16), 70),
        SINEW_STATUS_MISALIGNED);
  CHECK(sinew_skin_dqs_binds_prepare(skel.inverse_bind, 70,
                                     (sinew_dqs_binds *)(void *)(scratch + 16), 9),
        SINEW_STATUS_MISALIGNED);

  /* Garbage and bit-flipped bytes. */
  for (size_t i = 0; i < 4096; i++) scratch[i] = (uint8_t)(i * 2654435761u >> 13);
  CHECK(sinew_skeleton_load(scratch, 4096, &untouched), SINEW_STATUS_INVALID_DATA);
  CHECK(sinew_clip_load(scratch, 4096, &walk), SINEW_STATUS_INVALID_DATA);
  memcpy(scratch, skeleton_bytes, SINEW_HUMANOID_SKELETON_SIZE);
  scratch[8] ^= 0x04; /* version */
  CHECK(sinew_skeleton_load(scratch, SINEW_HUMANOID_SKELETON_SIZE, &untouched),
        SINEW_STATUS_UNSUPPORTED_VERSION);
  memcpy(scratch, skeleton_bytes, SINEW_HUMANOID_SKELETON_SIZE);
  scratch[48 + 2] = 0x77; /* parent of joint 1 points forward */
  CHECK(sinew_skeleton_load(scratch, SINEW_HUMANOID_SKELETON_SIZE, &untouched),
        SINEW_STATUS_INVALID_DATA);
  memcpy(scratch, walk_bytes, written);
  float nan = NAN;
  memcpy(scratch + 48 + 40, &nan, sizeof nan); /* a key */
  CHECK(sinew_clip_load(scratch, written, &walk), SINEW_STATUS_INVALID_DATA);
  /* A container's own fields are data, not arguments: a NaN sample rate
   * and zero frames are INVALID_DATA. */
  memcpy(scratch, walk_bytes, written);
  memcpy(scratch + 20, &nan, sizeof nan); /* sample rate */
  CHECK(sinew_clip_load(scratch, written, &walk), SINEW_STATUS_INVALID_DATA);
  memcpy(scratch, walk_bytes, written);
  memset(scratch + 16, 0, 4); /* frame count */
  CHECK(sinew_clip_load(scratch, written, &walk), SINEW_STATUS_INVALID_DATA);

  /* A handle not filled by _load, and one whose bytes moved. */
  sinew_skeleton forged;
  memset(&forged, 0, sizeof forged);
  CHECK(sinew_skeleton_local_to_model(&forged, walk_pose, 18, NULL, models, 70),
        SINEW_STATUS_INVALID_HANDLE);
  forged = skel;
  forged.data = scratch;
  CHECK(sinew_skeleton_find_joint(&forged, "head", 4, &joint), SINEW_STATUS_INVALID_HANDLE);

  /* Out-of-domain arguments. */
  CHECK(sinew_clip_load(walk_bytes, written, &walk), OK);
  sinew_clip forged_clip = walk;
  forged_clip.frame_count += 1; /* would read past the keys */
  CHECK(sinew_clip_sample(&forged_clip, 0.0f, SINEW_TIME_LOOP, walk_pose, skel.soa_count),
        SINEW_STATUS_INVALID_HANDLE);
  CHECK(sinew_clip_sample(&walk, NAN, SINEW_TIME_LOOP, walk_pose, skel.soa_count),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_clip_sample(&walk, 0.0f, 7, walk_pose, skel.soa_count),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_humanoid_clip_size(&skel, 3, 30.0f, &size), SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_humanoid_clip_size(&skel, SINEW_GAIT_WALK, -1.0f, &size),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_skeleton_find_joint(&skel, "no such joint", 13, &joint), SINEW_STATUS_NOT_FOUND);
  CHECK(sinew_skeleton_joint_name(&skel, 70, &(const char *){NULL}, &size),
        SINEW_STATUS_OUT_OF_RANGE);
  CHECK(sinew_skeleton_local_to_model_range(&skel, walk_pose, 18, NULL, 10, 71, models, 70),
        SINEW_STATUS_OUT_OF_RANGE);
  /* Both ramps must fit: 2 * (SIZE_MAX / 2 + 1) wraps past SIZE_MAX. */
  float ramp = -1.0f;
  CHECK(sinew_mix_ramp_weight(SINEW_RAMP_LINEAR, SIZE_MAX / 2 + 1, 0, SIZE_MAX, &ramp),
        SINEW_STATUS_INVALID_ARGUMENT);
  if (ramp != -1.0f) exit(1);
  sinew_blend_layer layer = {walk_pose, 18, -1.0f, NULL, 0};
  CHECK(sinew_pose_blend(&layer, 1, NULL, 0, skel.rest_pose, 18, 0.1f, blended, 18),
        SINEW_STATUS_INVALID_ARGUMENT);
  /* Two finite weights whose sum overflows. */
  sinew_blend_layer huge[2] = {{walk_pose, 18, 3.4e38f, NULL, 0}, {jog_pose, 18, 3.4e38f, NULL, 0}};
  CHECK(sinew_pose_blend(huge, 2, NULL, 0, skel.rest_pose, 18, 0.1f, blended, 18),
        SINEW_STATUS_INVALID_ARGUMENT);
  layer.weight = 1.0f;
  CHECK(sinew_pose_blend(&layer, 1, NULL, 0, skel.rest_pose, 18, 0.0f, blended, 18),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_pose_blend(&layer, SINEW_MAX_BLEND_LAYERS + 1, NULL, 0, skel.rest_pose, 18, 0.1f,
                         blended, 18),
        SINEW_STATUS_TOO_MANY_LAYERS);

  /* Overlapping buffers. */
  CHECK(sinew_skeleton_local_to_model(&skel, walk_pose, 18, &models[3], models, 70),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  CHECK(sinew_pose_blend(&layer, 1, NULL, 0, skel.rest_pose, 18, 0.1f, walk_pose, 18),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  CHECK(sinew_skin_lbs_palette(models, 70, skel.inverse_bind, 70, (sinew_float3x4 *)models, 70),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  CHECK(sinew_skin_lbs_palette_prepared(models, 70, lbs_binds, 70,
                                        (sinew_float3x4 *)(void *)lbs_binds, 70),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  sinew_skin_mesh mesh = {VERTICES, &positions[0][0], &normals[0][0], NULL,
                          &joints[0][0], &weights[0][0], NULL, NULL};
  sinew_skin_target in_place = {&positions[0][0], NULL, NULL};
  CHECK(sinew_skin(LBS(lbs, 70), &mesh, &in_place), SINEW_STATUS_OVERLAPPING_BUFFERS);

  /* Bad influences. */
  sinew_skin_target target = {&out_positions[0][0], &out_normals[0][0], NULL};
  joints[3][2] = 70;
  CHECK(sinew_skin(LBS(lbs, 70), &mesh, &target), SINEW_STATUS_INVALID_INFLUENCE);
  joints[3][2] = 0;
  weights[5][1] = -0.3f;
  CHECK(sinew_skin(DQS(dqs, 70), &mesh, &target), SINEW_STATUS_INVALID_INFLUENCE);
  weights[5][1] = 0.3f;
  sinew_skin_target no_normals_in = {&out_positions[0][0], &out_normals[0][0], NULL};
  mesh.normals = NULL;
  CHECK(sinew_skin(LBS(lbs, 70), &mesh, &no_normals_in), SINEW_STATUS_NULL_PARAMETER);

  /* Every status has a description. */
  for (unsigned s = 0; s < 8000; s++)
    if (sinew_status_string(s) == NULL || sinew_status_string(s)[0] == '\0') exit(1);
  if (sinew_soa_count(70) != 18 || sinew_soa_count(0) != 0) exit(1);
}

/* A compressed clip (the humanoid's walk, written by the Rust test with
 * sinew_std::compress): load, sample with the rest pose, print the pose's
 * sum; then its bad input. */
static alignas(16) uint8_t compressed_bytes[MAX_CLIP];
static void compressed(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) exit(1);
  size_t len = fread(compressed_bytes, 1, sizeof compressed_bytes, f);
  fclose(f);
  sinew_skeleton skel;
  CHECK(sinew_skeleton_load(skeleton_bytes, sizeof skeleton_bytes, &skel), SINEW_STATUS_OK);
  sinew_compressed_clip clip, untouched;
  memset(&untouched, 0x5a, sizeof untouched);
  clip = untouched;
  CHECK(sinew_compressed_clip_load(compressed_bytes, len, &clip), SINEW_STATUS_OK);
  if (clip.soa_count != skel.soa_count || clip.joint_count != skel.joint_count) exit(1);
  sinew_soa_transform pose[32], rest_copy[32];
  CHECK(sinew_compressed_clip_sample(&clip, 0.37f, SINEW_TIME_LOOP, skel.rest_pose, skel.soa_count,
                                     pose, skel.soa_count),
        SINEW_STATUS_OK);
  printf("compressed_sum %.9g\n", sum_floats(&pose[0].translation[0][0], skel.soa_count * 40));
  printf("compressed_frames %u\n", clip.frame_count);

  /* The playback cache from zeros, with the clip's `cache_blocks` (three
   * frames of its animated tracks, less than three poses; decoding ahead):
   * the uncached sampler's bytes at each 60 Hz tick; a cache buffer below
   * `min_cache_blocks` is BAD_LENGTH. */
  if (clip.min_cache_blocks == 0 || clip.min_cache_blocks >= 2 * skel.soa_count ||
      clip.cache_blocks >= 3 * skel.soa_count || clip.cache_blocks > 64)
    exit(1);
  static sinew_soa_transform cache_blocks[64], cached[32];
  sinew_playback_cache cache = {0};
  for (int i = 0; i < 40; i++) {
    float t = (float)i / 60.0f;
    CHECK(sinew_compressed_clip_sample_cached(&clip, t, SINEW_TIME_LOOP, skel.rest_pose,
                                              skel.soa_count, &cache, cache_blocks,
                                              clip.cache_blocks, cached, skel.soa_count),
          SINEW_STATUS_OK);
    CHECK(sinew_compressed_clip_sample(&clip, t, SINEW_TIME_LOOP, skel.rest_pose, skel.soa_count,
                                       pose, skel.soa_count),
          SINEW_STATUS_OK);
    if (memcmp(pose, cached, skel.soa_count * sizeof pose[0]) != 0) exit(1);
  }
  CHECK(sinew_compressed_clip_sample_cached(&clip, 0.5f, SINEW_TIME_LOOP, skel.rest_pose,
                                            skel.soa_count, &cache, cache_blocks,
                                            clip.min_cache_blocks - 1, cached, skel.soa_count),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_compressed_clip_sample_cached(&clip, 0.5f, SINEW_TIME_LOOP, skel.rest_pose,
                                            skel.soa_count, NULL, cache_blocks,
                                            clip.min_cache_blocks, cached, skel.soa_count),
        SINEW_STATUS_NULL_PARAMETER);

  /* Bad input: the out-parameter is left alone on every failure. */
  sinew_compressed_clip bad = untouched;
  CHECK(sinew_compressed_clip_load(NULL, len, &bad), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_compressed_clip_load(compressed_bytes, len, NULL), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_compressed_clip_load(compressed_bytes, 40, &bad), SINEW_STATUS_INVALID_DATA);
  memcpy(scratch + 4, compressed_bytes, len);
  CHECK(sinew_compressed_clip_load(scratch + 4, len, &bad), SINEW_STATUS_MISALIGNED);
  CHECK(sinew_compressed_clip_load(skeleton_bytes, sizeof skeleton_bytes, &bad),
        SINEW_STATUS_INVALID_DATA);
  memcpy(scratch, compressed_bytes, len);
  scratch[len / 2] ^= 0x10; /* a bit flip in the metadata or the stream */
  scratch[8] ^= 0x01;       /* and in the version */
  CHECK(sinew_compressed_clip_load(scratch, len, &bad), SINEW_STATUS_UNSUPPORTED_VERSION);
  if (memcmp(&bad, &untouched, sizeof bad) != 0) exit(1);
  /* Sampling: forged, zeroed and edited handles; mode, time, lengths, rest. */
  memset(&bad, 0, sizeof bad);
  CHECK(sinew_compressed_clip_sample(&bad, 0.1f, SINEW_TIME_LOOP, skel.rest_pose, skel.soa_count,
                                     pose, skel.soa_count),
        SINEW_STATUS_INVALID_HANDLE);
  bad = clip;
  bad.frame_count += 1;
  CHECK(sinew_compressed_clip_sample(&bad, 0.1f, SINEW_TIME_LOOP, skel.rest_pose, skel.soa_count,
                                     pose, skel.soa_count),
        SINEW_STATUS_INVALID_HANDLE);
  CHECK(sinew_compressed_clip_sample(NULL, 0.1f, SINEW_TIME_LOOP, skel.rest_pose, skel.soa_count,
                                     pose, skel.soa_count),
        SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_compressed_clip_sample(&clip, 0.1f, 7, skel.rest_pose, skel.soa_count, pose,
                                     skel.soa_count),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_compressed_clip_sample(&clip, NAN, SINEW_TIME_LOOP, skel.rest_pose, skel.soa_count,
                                     pose, skel.soa_count),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_compressed_clip_sample(&clip, 0.1f, SINEW_TIME_LOOP, skel.rest_pose, skel.soa_count,
                                     pose, skel.soa_count - 1),
        SINEW_STATUS_BAD_LENGTH);
  if (clip.needs_rest_pose) {
    CHECK(sinew_compressed_clip_sample(&clip, 0.1f, SINEW_TIME_LOOP, NULL, 0, pose,
                                       skel.soa_count),
          SINEW_STATUS_NULL_PARAMETER);
    CHECK(sinew_compressed_clip_sample(&clip, 0.1f, SINEW_TIME_LOOP, skel.rest_pose,
                                       skel.soa_count - 1, pose, skel.soa_count),
          SINEW_STATUS_BAD_LENGTH);
  }
  memcpy(rest_copy, skel.rest_pose, skel.soa_count * sizeof rest_copy[0]);
  CHECK(sinew_compressed_clip_sample(&clip, 0.1f, SINEW_TIME_LOOP, rest_copy, skel.soa_count,
                                     rest_copy, skel.soa_count),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  CHECK(sinew_compressed_clip_sample(&clip, 0.1f, SINEW_TIME_LOOP, skel.rest_pose, skel.soa_count,
                                     (sinew_soa_transform *)compressed_bytes, skel.soa_count),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
}

/* A mesh container (the mesh of make_mesh() with the humanoid's inverse
 * binds, written by the Rust test with sinew_core::mesh): load it, skin it
 * with the frame's LBS palette exactly as the arrays it came from, print
 * its counts; then its bad input. */
static alignas(16) uint8_t mesh_bytes[1 << 16];
static void mesh_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) exit(1);
  size_t len = fread(mesh_bytes, 1, sizeof mesh_bytes, f);
  fclose(f);
  sinew_mesh m, untouched;
  memset(&untouched, 0x5a, sizeof untouched);
  m = untouched;
  CHECK(sinew_mesh_load(mesh_bytes, len, &m), SINEW_STATUS_OK);
  printf("mesh_vertices %zu\nmesh_indices %u\nmesh_joints %u\n", m.mesh.vertex_count,
         m.index_count, m.joint_count);
  printf("mesh_position_sum %.17g\n", sum_floats(m.mesh.positions, 3 * m.mesh.vertex_count));
  if (m.mesh.tangents != NULL || m.mesh.joints1 != NULL || m.mesh.normals == NULL ||
      m.mesh.vertex_count != VERTICES) {
    fprintf(stderr, "mesh handle: wrong optional arrays or vertex count\n");
    exit(1);
  }
  make_mesh(); /* the bad-input tests edit the arrays */
  static float from_file[VERTICES][3], from_arrays[VERTICES][3];
  sinew_skin_target a = {&from_file[0][0], NULL, NULL}, b = {&from_arrays[0][0], NULL, NULL};
  sinew_skin_mesh arrays = {VERTICES, &positions[0][0], &normals[0][0], NULL,
                            &joints[0][0], &weights[0][0], NULL, NULL};
  CHECK(sinew_skin(LBS(lbs, m.joint_count), &m.mesh, &a), SINEW_STATUS_OK);
  CHECK(sinew_skin(LBS(lbs, SINEW_HUMANOID_JOINT_COUNT), &arrays, &b), SINEW_STATUS_OK);
  if (memcmp(from_file, from_arrays, sizeof from_file) != 0) {
    fprintf(stderr, "the loaded mesh skins differently from its arrays\n");
    exit(1);
  }

  /* Bad input: the out-parameter is left alone on every failure. */
  sinew_mesh bad = untouched;
  CHECK(sinew_mesh_load(NULL, len, &bad), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_mesh_load(mesh_bytes, len, NULL), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_mesh_load(mesh_bytes, 40, &bad), SINEW_STATUS_INVALID_DATA);
  CHECK(sinew_mesh_load(mesh_bytes, len - 16, &bad), SINEW_STATUS_INVALID_DATA);
  memcpy(scratch + 4, mesh_bytes, len);
  CHECK(sinew_mesh_load(scratch + 4, len, &bad), SINEW_STATUS_MISALIGNED);
  CHECK(sinew_mesh_load(skeleton_bytes, sizeof skeleton_bytes, &bad), SINEW_STATUS_INVALID_DATA);
  memcpy(scratch, mesh_bytes, len);
  scratch[8] ^= 0x01; /* the version */
  CHECK(sinew_mesh_load(scratch, len, &bad), SINEW_STATUS_UNSUPPORTED_VERSION);
  /* An influence naming joint 70 of 70, and an index past the vertices. */
  memcpy(scratch, mesh_bytes, len);
  size_t joints_at = (size_t)((const uint8_t *)m.mesh.joints - mesh_bytes);
  scratch[joints_at] = SINEW_HUMANOID_JOINT_COUNT;
  CHECK(sinew_mesh_load(scratch, len, &bad), SINEW_STATUS_INVALID_DATA);
  memcpy(scratch, mesh_bytes, len);
  size_t indices_at = (size_t)((const uint8_t *)m.indices - mesh_bytes);
  scratch[indices_at] = VERTICES;
  CHECK(sinew_mesh_load(scratch, len, &bad), SINEW_STATUS_INVALID_DATA);
  if (memcmp(&bad, &untouched, sizeof bad) != 0) {
    fprintf(stderr, "a failed sinew_mesh_load wrote its out-parameter\n");
    exit(1);
  }
}

/* Inverse kinematics on the humanoid's rest pose: a two-bone leg to a
 * reachable and an unreachable target, a look-at chain, foot placement on
 * a sloped ground from a callback and from probed arrays; then every
 * error path, each leaving the pose, the matrices, the state and the
 * report untouched. The sums printed are compared with the Rust API. */
static sinew_skeleton ik_skel;
static sinew_soa_transform ik_local[32], ik_local_before[32];
static sinew_float4x4 ik_models[SINEW_HUMANOID_JOINT_COUNT], ik_models_before[SINEW_HUMANOID_JOINT_COUNT];
static sinew_float4x4 ik_fk[SINEW_HUMANOID_JOINT_COUNT];
static sinew_foot_state ik_state, ik_state_before;
static sinew_foot_report ik_report, ik_report_before;

static void ik_reset(void) {
  memcpy(ik_local, ik_skel.rest_pose, sizeof(sinew_soa_transform) * ik_skel.soa_count);
  CHECK(sinew_skeleton_local_to_model(&ik_skel, ik_local, ik_skel.soa_count, NULL, ik_models,
                                      ik_skel.joint_count),
        SINEW_STATUS_OK);
}

static size_t ik_joint(const char *name) {
  size_t j = 0;
  CHECK(sinew_skeleton_find_joint(&ik_skel, name, strlen(name), &j), SINEW_STATUS_OK);
  return j;
}

static const float *ik_pos(size_t j) { return ik_models[j].cols[3]; }

static float dist3(const float *a, const float *b) {
  float d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* The sine of the angle between a and b. */
static float sin_between(const float *a, const float *b) {
  float c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  float z[3] = {0, 0, 0};
  return dist3(c, z) / (dist3(a, z) * dist3(b, z));
}

static double ik_sum(void) {
  return sum_floats(&ik_local[0].translation[0][0], 40 * ik_skel.soa_count) +
         sum_floats(&ik_models[0].cols[0][0], 16 * ik_skel.joint_count);
}

/* The matrices a solve leaves are the FK of the local pose it leaves. */
static void ik_check_models(const char *what) {
  CHECK(sinew_skeleton_local_to_model(&ik_skel, ik_local, ik_skel.soa_count, NULL, ik_fk,
                                      ik_skel.joint_count),
        SINEW_STATUS_OK);
  for (unsigned j = 0; j < ik_skel.joint_count; j++)
    for (int c = 0; c < 4; c++)
      for (int r = 0; r < 4; r++)
        if (fabsf(ik_fk[j].cols[c][r] - ik_models[j].cols[c][r]) > 1e-5f) {
          fprintf(stderr, "%s: joint %u's matrix is not the FK of the pose\n", what, j);
          exit(1);
        }
}

static void ik_snapshot(void) {
  memcpy(ik_local_before, ik_local, sizeof ik_local);
  memcpy(ik_models_before, ik_models, sizeof ik_models);
  ik_state_before = ik_state;
  ik_report_before = ik_report;
}

/* CHECK, and the call wrote nothing. */
#define CHECK_UNTOUCHED(call, want)                                                    \
  do {                                                                                 \
    ik_snapshot();                                                                     \
    CHECK(call, want);                                                                 \
    if (memcmp(ik_local, ik_local_before, sizeof ik_local) != 0 ||                     \
        memcmp(ik_models, ik_models_before, sizeof ik_models) != 0 ||                  \
        memcmp(&ik_state, &ik_state_before, sizeof ik_state) != 0 ||                   \
        memcmp(&ik_report, &ik_report_before, sizeof ik_report) != 0) {                \
      fprintf(stderr, "%s:%d: %s wrote on error\n", __FILE__, __LINE__, #call);        \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

/* A plane y = base + slope * x under the feet; counts its calls, fails on
 * call `fail_at` (1-based; 0: never), or answers garbage when asked. */
typedef struct {
  float base, slope;
  unsigned calls, fail_at;
  int garbage; /* 1: NaN height, 2: hit = 2, 3: zero normal */
} ground_plane;

static uint32_t plane_ground(void *user, float x, float z, sinew_ground_hit *hit) {
  ground_plane *g = user;
  (void)z;
  g->calls++;
  if (hit->hit != 0 || hit->normal[1] != 1.0f) exit(1); /* arrives as "no ground" */
  if (g->fail_at != 0 && g->calls == g->fail_at) return 42;
  hit->hit = g->garbage == 2 ? 2 : 1;
  hit->height = g->garbage == 1 ? NAN : g->base + g->slope * x;
  hit->normal[0] = g->garbage == 3 ? 0.0f : -g->slope;
  hit->normal[1] = g->garbage == 3 ? 0.0f : 1.0f;
  hit->normal[2] = 0.0f;
  return 0;
}

static void ik(void) {
  CHECK(sinew_skeleton_load(skeleton_bytes, sizeof skeleton_bytes, &ik_skel), SINEW_STATUS_OK);
  const size_t pelvis = ik_joint("pelvis"), thigh = ik_joint("thigh_l"), calf = ik_joint("calf_l"),
               foot = ik_joint("foot_l"), thigh_r = ik_joint("thigh_r"),
               calf_r = ik_joint("calf_r"), foot_r = ik_joint("foot_r"),
               spine = ik_joint("spine_03"), neck = ik_joint("neck_01"), head = ik_joint("head"),
               hand = ik_joint("hand_l");
  sinew_ik_pose pose = {&ik_skel, ik_local, ik_skel.soa_count, NULL, ik_models,
                        ik_skel.joint_count};

  /* Two-bone: the left leg to a reachable target in front. */
  ik_reset();
  sinew_two_bone leg = {thigh, calf, foot, {0.15f, 0.25f, 0.2f}, {0, 0, 1}, {-1, 0, 0},
                        1.0f, 1.0f, 0.0f};
  sinew_two_bone_report tb;
  memset(&tb, 0, sizeof tb);
  CHECK(sinew_two_bone_solve(&pose, &leg, &tb), SINEW_STATUS_OK);
  if (tb.reached != 1 || dist3(ik_pos(foot), leg.target) > 1e-4f) {
    fprintf(stderr, "two-bone: reached %u, foot %g from the target\n", tb.reached,
            (double)dist3(ik_pos(foot), leg.target));
    exit(1);
  }
  if (ik_pos(calf)[2] <= ik_pos(thigh)[2]) exit(1); /* the knee bends towards the pole (+Z) */
  ik_check_models("two-bone");
  printf("ik_two_bone_sum %.17g\n", ik_sum());
  CHECK(sinew_two_bone_solve(&pose, &leg, NULL), SINEW_STATUS_OK); /* report optional */

  /* Out of reach: straight towards the target, not reached. */
  ik_reset();
  sinew_two_bone far = leg;
  far.target[0] = 0.1f;
  far.target[1] = -1.0f;
  far.target[2] = 0.5f;
  CHECK(sinew_two_bone_solve(&pose, &far, &tb), SINEW_STATUS_OK);
  float to_foot[3], to_target[3];
  for (int c = 0; c < 3; c++) {
    to_foot[c] = ik_pos(foot)[c] - ik_pos(thigh)[c];
    to_target[c] = far.target[c] - ik_pos(thigh)[c];
  }
  float straight = dist3(ik_pos(thigh), ik_pos(calf)) + dist3(ik_pos(calf), ik_pos(foot)) -
                   dist3(ik_pos(thigh), ik_pos(foot));
  if (tb.reached != 0 || sin_between(to_foot, to_target) > 1e-4f || straight > 1e-4f) {
    fprintf(stderr, "two-bone out of reach: reached %u, sin %g, bend %g\n", tb.reached,
            (double)sin_between(to_foot, to_target), (double)straight);
    exit(1);
  }
  ik_check_models("two-bone out of reach");

  /* Look-at: spine, neck and head share the turn; the eyes (offset above
   * and in front of the head) look exactly at the target. */
  ik_reset();
  sinew_look_at_joint chain[3] = {
      {spine, 0.3f, INFINITY}, {neck, 0.5f, INFINITY}, {head, 1.0f, INFINITY}};
  sinew_aim aim = {{0.5f, 1.7f, 1.0f}, {0, 0, 1}, {0, 1, 0}, {0, 0.08f, 0.08f}, {0, 1, 0},
                   0.0f, 1.0f};
  sinew_look_at_report la = {7, 7};
  CHECK(sinew_look_at_solve(&pose, chain, 3, &aim, &la), SINEW_STATUS_OK);
  const sinew_float4x4 *hm = &ik_models[head];
  float eye[3], look[3];
  for (int r = 0; r < 3; r++) {
    eye[r] = hm->cols[3][r] + hm->cols[1][r] * 0.08f + hm->cols[2][r] * 0.08f;
    look[r] = aim.target[r] - eye[r];
  }
  if (la.reached != 1 || la.clamped != 0 || sin_between(hm->cols[2], look) > 1e-4f) {
    fprintf(stderr, "look-at: reached %u clamped %u, sin %g\n", la.reached, la.clamped,
            (double)sin_between(hm->cols[2], look));
    exit(1);
  }
  ik_check_models("look-at");
  printf("ik_look_at_sum %.17g\n", ik_sum());

  /* The head alone with weight 0.5, from its origin, no pole: it turns
   * half the angle towards the target. */
  ik_reset();
  sinew_look_at_joint half = {head, 0.5f, INFINITY};
  sinew_aim plain = {{0.5f, 1.7f, 1.0f}, {0, 0, 1}, {0, 0, 0}, {0, 0, 0}, {0, 1, 0}, 0.0f, 1.0f};
  float before[3], after[3];
  for (int r = 0; r < 3; r++) before[r] = plain.target[r] - ik_pos(head)[r];
  float angle0 = asinf(sin_between(ik_models[head].cols[2], before));
  CHECK(sinew_look_at_solve(&pose, &half, 1, &plain, &la), SINEW_STATUS_OK);
  for (int r = 0; r < 3; r++) after[r] = plain.target[r] - ik_pos(head)[r];
  float angle1 = asinf(sin_between(ik_models[head].cols[2], after));
  if (fabsf(angle1 - 0.5f * angle0) > 1e-4f) {
    fprintf(stderr, "look-at at half weight: %g rad left of %g\n", (double)angle1,
            (double)angle0);
    exit(1);
  }

  /* Foot placement: both legs on a plane rising to the left (+x). */
  sinew_foot_leg legs[2] = {{thigh, calf, foot, {-1, 0, 0}}, {thigh_r, calf_r, foot_r, {-1, 0, 0}}};
  sinew_foot_placement feet = {pelvis, legs, 2, 0.02f, 0.5f, 0.3f, 0.0f, 1.0f};
  ground_plane plane = {0.1f, 0.2f, 0, 0, 0};
  ik_reset();
  memset(&ik_state, 0, sizeof ik_state);
  memset(&ik_report, 0, sizeof ik_report);
  CHECK(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 1.0f / 60.0f,
                                   &ik_state, &ik_report),
        SINEW_STATUS_OK);
  if (plane.calls != 2 || ik_state.primed != 1 || ik_report.grounded[0] != 1 ||
      ik_report.grounded[1] != 1 || ik_report.grounded[2] != 0) {
    fprintf(stderr, "foot placement: %u calls, primed %u, grounded %u %u\n", plane.calls,
            ik_state.primed, ik_report.grounded[0], ik_report.grounded[1]);
    exit(1);
  }
  for (int i = 0; i < 2; i++) {
    const float *a = ik_pos(legs[i].ankle);
    float ground = plane.base + plane.slope * a[0];
    /* Never below the ground (by more than 1 mm), and on it: the rest
     * pose's ankles are at foot height over the floor. */
    if (a[1] - feet.foot_height < ground - 1e-3f || fabsf(a[1] - feet.foot_height - ground) > 1e-3f) {
      fprintf(stderr, "foot %d at %g over ground %g\n", i, (double)a[1], (double)ground);
      exit(1);
    }
  }
  ik_check_models("foot placement");
  printf("ik_foot_sum %.17g\nik_foot_pelvis_offset %.9g\n", ik_sum(),
         (double)ik_report.pelvis_offset);

  /* The same ground probed by the caller gives the same pose bit for bit. */
  static sinew_soa_transform by_callback[32];
  static sinew_float4x4 by_callback_models[SINEW_HUMANOID_JOINT_COUNT];
  memcpy(by_callback, ik_local, sizeof by_callback);
  memcpy(by_callback_models, ik_models, sizeof by_callback_models);
  ik_reset();
  sinew_foot_state probed_state;
  memset(&probed_state, 0, sizeof probed_state);
  sinew_ground_hit hits[2];
  for (int i = 0; i < 2; i++) {
    const float *a = ik_pos(legs[i].ankle);
    hits[i].hit = 1;
    hits[i].height = plane.base + plane.slope * a[0];
    hits[i].normal[0] = -plane.slope;
    hits[i].normal[1] = 1.0f;
    hits[i].normal[2] = 0.0f;
  }
  CHECK(sinew_foot_placement_solve_probed(&pose, &feet, hits, 2, 0.0f, 1.0f / 60.0f,
                                          &probed_state, NULL),
        SINEW_STATUS_OK);
  if (memcmp(by_callback, ik_local, sizeof by_callback) != 0 ||
      memcmp(by_callback_models, ik_models, sizeof by_callback_models) != 0 ||
      memcmp(&probed_state, &ik_state, sizeof probed_state) != 0) {
    fprintf(stderr, "probed foot placement differs from the callback's\n");
    exit(1);
  }

  /* Smoothed frames onto a lower ground: the springs lag, the feet still
   * never go below it. */
  feet.half_life = 0.1f;
  plane.base = -0.05f;
  for (int frame_ = 0; frame_ < 10; frame_++) {
    ik_reset();
    CHECK(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 1.0f / 60.0f,
                                     &ik_state, &ik_report),
          SINEW_STATUS_OK);
    for (int i = 0; i < 2; i++) {
      const float *a = ik_pos(legs[i].ankle);
      if (a[1] - feet.foot_height < plane.base + plane.slope * a[0] - 1e-3f) {
        fprintf(stderr, "frame %d: foot %d below the ground\n", frame_, i);
        exit(1);
      }
    }
  }
  feet.half_life = 0.0f;
  plane.base = 0.1f;

  /* Errors: every one leaves pose, matrices, state and report alone. */
  ik_reset();
  sinew_ik_pose bad_pose = pose;
  CHECK_UNTOUCHED(sinew_two_bone_solve(NULL, &leg, &tb), SINEW_STATUS_NULL_PARAMETER);
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, NULL, &tb), SINEW_STATUS_NULL_PARAMETER);
  bad_pose.skeleton = NULL;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&bad_pose, &leg, &tb), SINEW_STATUS_NULL_PARAMETER);
  bad_pose = pose;
  bad_pose.models = NULL;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&bad_pose, &leg, &tb), SINEW_STATUS_NULL_PARAMETER);
  bad_pose = pose;
  bad_pose.local_len -= 1;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&bad_pose, &leg, &tb), SINEW_STATUS_BAD_LENGTH);
  bad_pose = pose;
  bad_pose.models_len = 3;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&bad_pose, &leg, &tb), SINEW_STATUS_BAD_LENGTH);
  bad_pose = pose;
  bad_pose.models = (sinew_float4x4 *)(void *)((uint8_t *)ik_models + 4);
  bad_pose.models_len = ik_skel.joint_count - 1;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&bad_pose, &leg, &tb), SINEW_STATUS_MISALIGNED);
  bad_pose = pose;
  bad_pose.local = (sinew_soa_transform *)ik_skel.rest_pose; /* inside the container */
  CHECK_UNTOUCHED(sinew_two_bone_solve(&bad_pose, &leg, &tb), SINEW_STATUS_OVERLAPPING_BUFFERS);
  bad_pose = pose;
  bad_pose.models = (sinew_float4x4 *)(void *)ik_local;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&bad_pose, &leg, &tb), SINEW_STATUS_OVERLAPPING_BUFFERS);
  sinew_skeleton forged_skel = ik_skel;
  forged_skel.check ^= 1;
  bad_pose = pose;
  bad_pose.skeleton = &forged_skel;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&bad_pose, &leg, &tb), SINEW_STATUS_INVALID_HANDLE);
  sinew_two_bone bad = leg;
  bad.end = ik_skel.joint_count;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_OUT_OF_RANGE);
  bad = leg;
  bad.start = SIZE_MAX;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_OUT_OF_RANGE);
  bad = leg;
  bad.mid = foot; /* thigh -> foot is not parent -> child */
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_NOT_A_CHAIN);
  bad = leg;
  bad.start = thigh_r;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_NOT_A_CHAIN);
  bad = leg;
  bad.target[1] = NAN;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_INVALID_ARGUMENT);
  bad = leg;
  bad.pole[2] = INFINITY;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_INVALID_ARGUMENT);
  bad = leg;
  bad.twist = NAN;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_INVALID_ARGUMENT);
  bad = leg;
  bad.weight = 1.5f;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_INVALID_ARGUMENT);
  bad = leg;
  bad.soften = -0.1f;
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_INVALID_ARGUMENT);
  bad = leg;
  memset(bad.mid_axis, 0, sizeof bad.mid_axis);
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &bad, &tb), SINEW_STATUS_INVALID_ARGUMENT);
  /* The pose itself: a knee on its hip, a hip with a zero x scale (its
   * frame is singular, its bone keeps its length), a NaN. */
  ik_local[calf / 4].translation[1][calf % 4] = 0.0f;
  CHECK(sinew_skeleton_local_to_model(&ik_skel, ik_local, ik_skel.soa_count, NULL, ik_models,
                                      ik_skel.joint_count),
        SINEW_STATUS_OK);
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &leg, &tb), SINEW_STATUS_ZERO_LENGTH_BONE);
  ik_reset();
  ik_local[thigh / 4].scale[0][thigh % 4] = 0.0f;
  CHECK(sinew_skeleton_local_to_model(&ik_skel, ik_local, ik_skel.soa_count, NULL, ik_models,
                                      ik_skel.joint_count),
        SINEW_STATUS_OK);
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &leg, &tb), SINEW_STATUS_SINGULAR_TRANSFORM);
  ik_reset();
  ik_local[thigh / 4].rotation[0][thigh % 4] = NAN;
  CHECK(sinew_skeleton_local_to_model(&ik_skel, ik_local, ik_skel.soa_count, NULL, ik_models,
                                      ik_skel.joint_count),
        SINEW_STATUS_OK);
  CHECK_UNTOUCHED(sinew_two_bone_solve(&pose, &leg, &tb), SINEW_STATUS_INVALID_ARGUMENT);
  ik_reset();

  /* Look-at errors. */
  sinew_look_at_joint bad_chain[3];
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, NULL, 3, &aim, &la), SINEW_STATUS_NULL_PARAMETER);
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, chain, 3, NULL, &la), SINEW_STATUS_NULL_PARAMETER);
  CHECK_UNTOUCHED(sinew_look_at_solve(NULL, chain, 3, &aim, &la), SINEW_STATUS_NULL_PARAMETER);
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, chain, 0, &aim, &la), SINEW_STATUS_BAD_LENGTH);
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, chain, SINEW_MAX_LOOK_AT_JOINTS + 1, &aim, &la),
                  SINEW_STATUS_CAPACITY_EXCEEDED);
  memcpy(bad_chain, chain, sizeof chain);
  bad_chain[1].joint = 70;
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, bad_chain, 3, &aim, &la), SINEW_STATUS_OUT_OF_RANGE);
  memcpy(bad_chain, chain, sizeof chain);
  bad_chain[0].joint = head;
  bad_chain[2].joint = spine; /* head, neck, spine: leaf first */
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, bad_chain, 3, &aim, &la), SINEW_STATUS_NOT_A_CHAIN);
  memcpy(bad_chain, chain, sizeof chain);
  bad_chain[1].joint = hand; /* the hand is no ancestor of the head */
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, bad_chain, 3, &aim, &la), SINEW_STATUS_NOT_A_CHAIN);
  memcpy(bad_chain, chain, sizeof chain);
  bad_chain[2].joint = neck; /* a joint twice */
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, bad_chain, 3, &aim, &la), SINEW_STATUS_NOT_A_CHAIN);
  memcpy(bad_chain, chain, sizeof chain);
  bad_chain[0].weight = -1.0f;
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, bad_chain, 3, &aim, &la),
                  SINEW_STATUS_INVALID_ARGUMENT);
  memcpy(bad_chain, chain, sizeof chain);
  bad_chain[2].max_angle = NAN;
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, bad_chain, 3, &aim, &la),
                  SINEW_STATUS_INVALID_ARGUMENT);
  sinew_aim bad_aim = aim;
  bad_aim.target[0] = NAN;
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, chain, 3, &bad_aim, &la),
                  SINEW_STATUS_INVALID_ARGUMENT);
  bad_aim = aim;
  memset(bad_aim.forward, 0, sizeof bad_aim.forward);
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, chain, 3, &bad_aim, &la),
                  SINEW_STATUS_INVALID_ARGUMENT);
  bad_aim = aim;
  bad_aim.weight = 2.0f;
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, chain, 3, &bad_aim, &la),
                  SINEW_STATUS_INVALID_ARGUMENT);
  CHECK_UNTOUCHED(sinew_look_at_solve(&pose, (const sinew_look_at_joint *)(void *)ik_models, 3,
                                      &aim, &la),
                  SINEW_STATUS_OVERLAPPING_BUFFERS);

  /* Foot placement errors. */
  memset(&ik_state, 0, sizeof ik_state);
  sinew_foot_placement bad_feet = feet;
  sinew_foot_leg bad_legs[SINEW_MAX_FOOT_LEGS + 1];
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, NULL, &plane, 0.0f, 0.01f, &ik_state,
                                             &ik_report),
                  SINEW_STATUS_NULL_PARAMETER);
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 0.01f,
                                             NULL, &ik_report),
                  SINEW_STATUS_NULL_PARAMETER);
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, NULL, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_NULL_PARAMETER);
  bad_feet.legs = NULL;
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &bad_feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_NULL_PARAMETER);
  for (int i = 0; i <= SINEW_MAX_FOOT_LEGS; i++) bad_legs[i] = legs[i % 2];
  bad_feet.legs = bad_legs;
  bad_feet.leg_count = SINEW_MAX_FOOT_LEGS + 1;
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &bad_feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_CAPACITY_EXCEEDED);
  bad_feet.leg_count = 0;
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &bad_feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_BAD_LENGTH);
  bad_feet = feet;
  bad_feet.legs = bad_legs;
  bad_legs[1].ankle = 70;
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &bad_feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_OUT_OF_RANGE);
  bad_legs[1] = legs[1];
  bad_legs[1].knee = calf; /* the right hip with the left knee */
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &bad_feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_NOT_A_CHAIN);
  bad_legs[1] = legs[1];
  bad_feet.pelvis = hand;
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &bad_feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_NOT_A_CHAIN);
  bad_feet = feet;
  bad_feet.max_tilt = 4.0f;
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &bad_feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_INVALID_ARGUMENT);
  bad_feet = feet;
  bad_feet.legs = bad_legs;
  memset(bad_legs[0].knee_axis, 0, sizeof bad_legs[0].knee_axis);
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &bad_feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_INVALID_ARGUMENT);
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, NAN, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_INVALID_ARGUMENT);
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, -0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_INVALID_ARGUMENT);
  ik_state.primed = 7; /* not a state this library wrote */
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_INVALID_ARGUMENT);
  ik_state.primed = 0;
  ik_state.feet[1].velocity = NAN;
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_INVALID_ARGUMENT);
  ik_state.feet[1].velocity = 0.0f;
  /* The callback fails on the second leg: the first was asked, nothing
   * is written. */
  plane.calls = 0;
  plane.fail_at = 2;
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_CALLBACK_FAILED);
  if (plane.calls != 2) exit(1);
  plane.calls = 0;
  plane.fail_at = 1;
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_CALLBACK_FAILED);
  if (plane.calls != 1) exit(1);
  plane.fail_at = 0;
  for (int g = 1; g <= 3; g++) {
    plane.garbage = g;
    CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 0.01f,
                                               &ik_state, &ik_report),
                    SINEW_STATUS_INVALID_ARGUMENT);
  }
  plane.garbage = 0;
  CHECK_UNTOUCHED(sinew_foot_placement_solve_probed(&pose, &feet, hits, 1, 0.0f, 0.01f, &ik_state,
                                                    &ik_report),
                  SINEW_STATUS_BAD_LENGTH);
  CHECK_UNTOUCHED(sinew_foot_placement_solve_probed(&pose, &feet, NULL, 2, 0.0f, 0.01f, &ik_state,
                                                    &ik_report),
                  SINEW_STATUS_NULL_PARAMETER);
  hits[1].height = NAN;
  CHECK_UNTOUCHED(sinew_foot_placement_solve_probed(&pose, &feet, hits, 2, 0.0f, 0.01f, &ik_state,
                                                    &ik_report),
                  SINEW_STATUS_INVALID_ARGUMENT);
  hits[1].hit = 0; /* no ground: the height is not read */
  CHECK(sinew_foot_placement_solve_probed(&pose, &feet, hits, 2, 0.0f, 0.01f, &ik_state,
                                          &ik_report),
        SINEW_STATUS_OK);
  if (ik_report.grounded[0] != 1 || ik_report.grounded[1] != 0) exit(1);
  ik_reset();
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 0.01f,
                                             (sinew_foot_state *)(void *)ik_models, &ik_report),
                  SINEW_STATUS_OVERLAPPING_BUFFERS);
  /* A shin of zero length. */
  ik_local[foot_r / 4].translation[1][foot_r % 4] = 0.0f;
  CHECK(sinew_skeleton_local_to_model(&ik_skel, ik_local, ik_skel.soa_count, NULL, ik_models,
                                      ik_skel.joint_count),
        SINEW_STATUS_OK);
  CHECK_UNTOUCHED(sinew_foot_placement_solve(&pose, &feet, plane_ground, &plane, 0.0f, 0.01f,
                                             &ik_state, &ik_report),
                  SINEW_STATUS_ZERO_LENGTH_BONE);
}

/* Exits with the condition's text unless it holds. */
#define REQUIRE(cond)                                                                  \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "%s:%d: %s does not hold\n", __FILE__, __LINE__, #cond);         \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

/* Secondary motion: springs against their closed forms, PD joints against
 * the semi-implicit Euler recursion they integrate (about one axis it is a
 * scalar recursion), then every error path, each leaving its outputs
 * untouched. */

/* CHECK, and the call left `obj` as it was. */
#define CHECK_KEEPS(call, want, obj)                                                   \
  do {                                                                                 \
    unsigned char before_[sizeof(obj)];                                                \
    memcpy(before_, &(obj), sizeof(obj));                                              \
    CHECK(call, want);                                                                 \
    if (memcmp(before_, &(obj), sizeof(obj)) != 0) {                                   \
      fprintf(stderr, "%s:%d: %s wrote on error\n", __FILE__, __LINE__, #call);        \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

static void expect_near(const char *what, double got, double want, double tol) {
  if (!(fabs(got - want) <= tol)) {
    fprintf(stderr, "%s: got %.9g, wanted %.9g (tolerance %g)\n", what, got, want, tol);
    exit(1);
  }
}

enum { BATCH = 70 };
static sinew_spring batch[BATCH], batch_ref[BATCH];
static float batch_targets[BATCH];

static void springs(void) {
  const sinew_status OK = SINEW_STATUS_OK, BAD = SINEW_STATUS_INVALID_ARGUMENT;
  const double ln2 = log(2.0), pi = acos(-1.0);
  sinew_spring_params crit, under, snap;
  CHECK(sinew_spring_params_half_life(0.2f, &crit), OK);
  expect_near("half-life omega", crit.angular_frequency, 2.0 * ln2 / 0.2, 1e-5);
  expect_near("half-life zeta", crit.damping_ratio, 1.0, 0.0);
  CHECK(sinew_spring_params_frequency(1.5f, 0.3f, &under), OK);
  expect_near("frequency omega", under.angular_frequency, 2.0 * pi * 1.5, 1e-5);
  expect_near("frequency zeta", under.damping_ratio, 0.3, 1e-7);
  CHECK(sinew_spring_params_half_life(0.0f, &snap), OK);
  REQUIRE(isinf(snap.angular_frequency) && snap.damping_ratio == 1.0f);

  /* Released from 1 at rest towards a still 0: (1 + wt) e^{-wt}, the same
   * in one step of 0.35 s or seven of 0.05 s. */
  const double w = crit.angular_frequency, t = 0.35, e = exp(-w * t);
  sinew_spring s = {1.0f, 0.0f}, s7 = {1.0f, 0.0f};
  CHECK(sinew_spring_advance(&s, 0.0f, NULL, &crit, 0.35f), OK);
  for (int i = 0; i < 7; i++) CHECK(sinew_spring_advance(&s7, 0.0f, NULL, &crit, 0.05f), OK);
  expect_near("spring value", s.value, (1.0 + w * t) * e, 1e-6);
  expect_near("spring velocity", s.velocity, -w * w * t * e, 1e-5);
  expect_near("spring in 7 steps", s7.value, s.value, 1e-5);
  expect_near("spring velocity in 7 steps", s7.velocity, s.velocity, 1e-4);

  /* A target leaving 0 at 0.5/s: 0.5 t + e^{-wt} (1 + (w - 0.5) t). */
  const float gv = 0.5f;
  s = (sinew_spring){1.0f, 0.0f};
  CHECK(sinew_spring_advance(&s, 0.0f, &gv, &crit, 0.35f), OK);
  expect_near("moving target", s.value, 0.5 * t + e * (1.0 + (w - 0.5) * t), 1e-6);

  /* Under-damped from 1 at rest: e^{-zwt} (cos(wd t) + zw / wd sin(wd t)). */
  const double wu = under.angular_frequency, z = under.damping_ratio;
  const double wd = wu * sqrt(1.0 - z * z), tu = 0.4;
  s = (sinew_spring){1.0f, 0.0f};
  CHECK(sinew_spring_advance(&s, 0.0f, NULL, &under, 0.4f), OK);
  expect_near("under-damped", s.value,
              exp(-z * wu * tu) * (cos(wd * tu) + z * wu / wd * sin(wd * tu)), 1e-6);

  /* A half-life of 0 snaps onto the target and takes its velocity. */
  const float two = 2.0f;
  s = (sinew_spring){5.0f, 9.0f};
  CHECK(sinew_spring_advance(&s, 1.0f, &two, &snap, 0.5f), OK);
  REQUIRE(s.value == 2.0f && s.velocity == 2.0f);

  /* A vector is three float springs: g + (x - g)(1 + wt) e^{-wt}. */
  const double tv = 0.1, ev = (1.0 + w * tv) * exp(-w * tv);
  sinew_vec3_spring v = {{1.0f, 2.0f, -1.0f}, {0.0f, 0.0f, 0.0f}};
  const float goal[3] = {0.5f, 0.5f, 0.5f};
  CHECK(sinew_vec3_spring_advance(&v, goal, NULL, &crit, 0.1f), OK);
  const float start[3] = {1.0f, 2.0f, -1.0f};
  for (int k = 0; k < 3; k++)
    expect_near("vec3 spring", v.value[k], 0.5 + (start[k] - 0.5) * ev, 1e-6);

  /* A rotation 1 rad about +Y from a still identity: the angle follows
   * the float spring, about the same axis; -identity is the same target. */
  const double a = 1.0 * ev;
  sinew_quat_spring q = {{0.0f, sinf(0.5f), 0.0f, cosf(0.5f)}, {0.0f, 0.0f, 0.0f}};
  sinew_quat_spring q2 = q;
  const float identity[4] = {0, 0, 0, 1}, minus_identity[4] = {0, 0, 0, -1};
  CHECK(sinew_quat_spring_advance(&q, identity, NULL, &crit, 0.1f), OK);
  CHECK(sinew_quat_spring_advance(&q2, minus_identity, NULL, &crit, 0.1f), OK);
  const double want_q[4] = {0.0, sin(a / 2.0), 0.0, cos(a / 2.0)};
  for (int k = 0; k < 4; k++) expect_near("quat spring", q.value[k], want_q[k], 1e-6);
  expect_near("quat spring velocity", q.velocity[1], -w * w * tv * exp(-w * tv), 1e-5);
  double dot = 0.0;
  for (int k = 0; k < 4; k++) dot += (double)q.value[k] * q2.value[k];
  expect_near("quat spring, q and -q", fabs(dot), 1.0, 1e-6);
  expect_near("quat spring velocity, q and -q", q2.velocity[1], q.velocity[1], 1e-6);

  /* A batch (more than one pass of the library's stack buffer) is each
   * spring advanced alone, bit for bit. */
  for (int i = 0; i < BATCH; i++) {
    batch[i] = (sinew_spring){0.1f * (float)i - 3.0f, 0.05f * (float)i};
    batch_targets[i] = 1.0f - 0.02f * (float)i;
    batch_ref[i] = batch[i];
    CHECK(sinew_spring_advance(&batch_ref[i], batch_targets[i], NULL, &under, 1.0f / 30.0f), OK);
  }
  CHECK(sinew_spring_advance_batch(batch, BATCH, batch_targets, BATCH, &under, 1.0f / 30.0f), OK);
  REQUIRE(memcmp(batch, batch_ref, sizeof batch) == 0);
  CHECK(sinew_spring_advance_batch(NULL, 0, NULL, 0, &under, 0.1f), OK);

  /* Parameters out of range. */
  sinew_spring_params p = crit;
  CHECK_KEEPS(sinew_spring_params_half_life(-1.0f, &p), BAD, p);
  CHECK_KEEPS(sinew_spring_params_half_life(NAN, &p), BAD, p);
  CHECK_KEEPS(sinew_spring_params_half_life(INFINITY, &p), BAD, p);
  CHECK_KEEPS(sinew_spring_params_half_life(1e-9f, &p), BAD, p);
  CHECK(sinew_spring_params_half_life(0.1f, NULL), SINEW_STATUS_NULL_PARAMETER);
  CHECK_KEEPS(sinew_spring_params_frequency(-1.0f, 1.0f, &p), BAD, p);
  CHECK_KEEPS(sinew_spring_params_frequency(NAN, 1.0f, &p), BAD, p);
  CHECK_KEEPS(sinew_spring_params_frequency(1.0f, -0.1f, &p), BAD, p);
  CHECK_KEEPS(sinew_spring_params_frequency(1.0f, NAN, &p), BAD, p);
  CHECK_KEEPS(sinew_spring_params_frequency(2e5f, 1.0f, &p), BAD, p);
  CHECK_KEEPS(sinew_spring_params_frequency(1.0f, 2e4f, &p), BAD, p);
  CHECK(sinew_spring_params_frequency(1.0f, 1.0f, NULL), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_spring_params_half_life(0.1f, (sinew_spring_params *)(void *)(scratch + 1)),
        SINEW_STATUS_MISALIGNED);

  /* Advancing: NULL, bad parameters, bad time steps, NaN, overlaps. */
  s = (sinew_spring){1.0f, 0.5f};
  const float nan = NAN;
  const sinew_spring_params bad_params[4] = {
      {-1.0f, 1.0f}, {INFINITY, 0.5f}, {1.0f, NAN}, {2e6f, 1.0f}};
  for (int i = 0; i < 4; i++) {
    CHECK_KEEPS(sinew_spring_advance(&s, 0.0f, NULL, &bad_params[i], 0.1f), BAD, s);
    CHECK_KEEPS(sinew_spring_advance_batch(batch, BATCH, batch_targets, BATCH, &bad_params[i],
                                           0.1f),
                BAD, batch);
  }
  const float bad_dt[4] = {0.0f, -0.01f, NAN, INFINITY};
  for (int i = 0; i < 4; i++) {
    CHECK_KEEPS(sinew_spring_advance(&s, 0.0f, NULL, &crit, bad_dt[i]), BAD, s);
    CHECK_KEEPS(sinew_vec3_spring_advance(&v, goal, NULL, &crit, bad_dt[i]), BAD, v);
    CHECK_KEEPS(sinew_quat_spring_advance(&q, identity, NULL, &crit, bad_dt[i]), BAD, q);
    CHECK_KEEPS(sinew_spring_advance_batch(batch, BATCH, batch_targets, BATCH, &crit, bad_dt[i]),
                BAD, batch);
  }
  CHECK(sinew_spring_advance(NULL, 0.0f, NULL, &crit, 0.1f), SINEW_STATUS_NULL_PARAMETER);
  CHECK_KEEPS(sinew_spring_advance(&s, 0.0f, NULL, NULL, 0.1f), SINEW_STATUS_NULL_PARAMETER, s);
  CHECK_KEEPS(sinew_spring_advance(&s, NAN, NULL, &crit, 0.1f), BAD, s);
  CHECK_KEEPS(sinew_spring_advance(&s, 0.0f, &nan, &crit, 0.1f), BAD, s);
  CHECK_KEEPS(sinew_spring_advance(&s, 0.0f, &s.velocity, &crit, 0.1f),
              SINEW_STATUS_OVERLAPPING_BUFFERS, s);
  CHECK(sinew_spring_advance((sinew_spring *)(void *)(scratch + 1), 0.0f, NULL, &crit, 0.1f),
        SINEW_STATUS_MISALIGNED);
  sinew_spring broken = {NAN, 0.0f};
  CHECK_KEEPS(sinew_spring_advance(&broken, 0.0f, NULL, &crit, 0.1f), BAD, broken);

  const float nan3[3] = {0.0f, NAN, 0.0f};
  CHECK_KEEPS(sinew_vec3_spring_advance(&v, NULL, NULL, &crit, 0.1f),
              SINEW_STATUS_NULL_PARAMETER, v);
  CHECK_KEEPS(sinew_vec3_spring_advance(&v, nan3, NULL, &crit, 0.1f), BAD, v);
  CHECK_KEEPS(sinew_vec3_spring_advance(&v, goal, nan3, &crit, 0.1f), BAD, v);
  CHECK_KEEPS(sinew_vec3_spring_advance(&v, v.velocity, NULL, &crit, 0.1f),
              SINEW_STATUS_OVERLAPPING_BUFFERS, v);

  const float zero4[4] = {0, 0, 0, 0}, nan4[4] = {NAN, 0, 0, 1};
  CHECK_KEEPS(sinew_quat_spring_advance(&q, zero4, NULL, &crit, 0.1f), BAD, q);
  CHECK_KEEPS(sinew_quat_spring_advance(&q, nan4, NULL, &crit, 0.1f), BAD, q);
  CHECK_KEEPS(sinew_quat_spring_advance(&q, identity, nan3, &crit, 0.1f), BAD, q);
  CHECK_KEEPS(sinew_quat_spring_advance(&q, NULL, NULL, &crit, 0.1f),
              SINEW_STATUS_NULL_PARAMETER, q);
  sinew_quat_spring zero_q = {{0, 0, 0, 0}, {0, 0, 0}};
  CHECK_KEEPS(sinew_quat_spring_advance(&zero_q, identity, NULL, &crit, 0.1f), BAD, zero_q);
  CHECK_KEEPS(sinew_quat_spring_advance(&q, q.value, NULL, &crit, 0.1f),
              SINEW_STATUS_OVERLAPPING_BUFFERS, q);

  CHECK_KEEPS(sinew_spring_advance_batch(batch, BATCH, batch_targets, BATCH - 1, &crit, 0.1f),
              SINEW_STATUS_BAD_LENGTH, batch);
  CHECK(sinew_spring_advance_batch(NULL, BATCH, batch_targets, BATCH, &crit, 0.1f),
        SINEW_STATUS_NULL_PARAMETER);
  CHECK_KEEPS(sinew_spring_advance_batch(batch, BATCH, NULL, BATCH, &crit, 0.1f),
              SINEW_STATUS_NULL_PARAMETER, batch);
  CHECK_KEEPS(sinew_spring_advance_batch(batch, BATCH, batch_targets, BATCH, NULL, 0.1f),
              SINEW_STATUS_NULL_PARAMETER, batch);
  CHECK_KEEPS(sinew_spring_advance_batch(batch, BATCH, (const float *)(const void *)batch, BATCH,
                                         &crit, 0.1f),
              SINEW_STATUS_OVERLAPPING_BUFFERS, batch);
  /* A NaN in the last target (past the first pass): nothing written. */
  batch_targets[BATCH - 1] = NAN;
  CHECK_KEEPS(sinew_spring_advance_batch(batch, BATCH, batch_targets, BATCH, &crit, 0.1f), BAD,
              batch);
  batch_targets[BATCH - 1] = 0.0f;
  batch[BATCH - 1].velocity = INFINITY;
  CHECK_KEEPS(sinew_spring_advance_batch(batch, BATCH, batch_targets, BATCH, &crit, 0.1f), BAD,
              batch);
}

/* PD controllers: joints of a five-joint pose (two blocks), each turned
 * about +Z from an identity target. */
enum { PD_JOINTS = 5 };
static struct {
  sinew_pd_state state[PD_JOINTS];
  sinew_soa_transform out[2];
  sinew_substeps report;
} pd;
static sinew_soa_transform pd_anim[2];
static float bone_lengths[SINEW_HUMANOID_JOINT_COUNT];

static float bad_dt4(int i) {
  const float v[4] = {0.0f, -0.01f, NAN, INFINITY};
  return v[i];
}

static void pd_pose_rotation(sinew_soa_transform *pose, size_t j, const float q[4]) {
  for (int c = 0; c < 4; c++) pose[j / 4].rotation[c][j % 4] = q[c];
}

static float pd_angle_z(const sinew_pd_state *s) {
  return 2.0f * atan2f(s->rotation[2], s->rotation[3]);
}

static void pd_controllers(void) {
  const sinew_status OK = SINEW_STATUS_OK, BAD = SINEW_STATUS_INVALID_ARGUMENT;
  const float mass = 2.0f, length = 0.4f, inertia = mass * length * length / 3.0f;

  /* Constructors. */
  sinew_pd_joint crit, hl;
  CHECK(sinew_pd_joint_critical(50.0f, mass, length, &crit), OK);
  expect_near("critical kp", crit.kp, 50.0, 0.0);
  expect_near("critical kd", crit.kd, 2.0 * sqrt(50.0 * inertia), 1e-5);
  REQUIRE(crit.mass == mass && crit.length == length && crit.weight == 1.0f &&
          isinf(crit.torque_limit));
  const double w0 = 2.0 * log(2.0) / 0.2;
  CHECK(sinew_pd_joint_from_half_life(0.2f, mass, length, &hl), OK);
  expect_near("half-life kp", hl.kp, inertia * w0 * w0, 1e-4);
  expect_near("half-life kd", hl.kd, 2.0 * inertia * w0, 1e-5);

  /* Rest bone lengths: the longest child offset, else the own offset. */
  CHECK(sinew_pd_rest_bone_lengths(&ik_skel, bone_lengths, ik_skel.joint_count), OK);
  for (size_t j = 0; j < ik_skel.joint_count; j++) {
    double want = 0.0;
    for (size_t c = 0; c < ik_skel.joint_count; c++) {
      if (ik_skel.parents[c] != j) continue;
      const float *tr = &ik_skel.rest_pose[c / 4].translation[0][0];
      const double x = tr[c % 4], y = tr[4 + c % 4], zz = tr[8 + c % 4];
      const double l = sqrt(x * x + y * y + zz * zz);
      if (l > want) want = l;
    }
    if (want == 0.0 && ik_skel.parents[j] != SINEW_NO_PARENT) {
      const float *tr = &ik_skel.rest_pose[j / 4].translation[0][0];
      const double x = tr[j % 4], y = tr[4 + j % 4], zz = tr[8 + j % 4];
      want = sqrt(x * x + y * y + zz * zz);
    }
    expect_near("bone length", bone_lengths[j], want, 1e-6);
  }

  /* The animated pose: identity rotations, translations (j, 1, 2), scale
   * 1.5; the state starts 0.1, 0.3, 0.5, 0.7, 0.9 rad about +Z, at rest. */
  memset(pd_anim, 0, sizeof pd_anim);
  for (size_t j = 0; j < 8; j++) {
    pd_anim[j / 4].translation[0][j % 4] = (float)j;
    pd_anim[j / 4].translation[1][j % 4] = 1.0f;
    pd_anim[j / 4].translation[2][j % 4] = 2.0f;
    pd_anim[j / 4].rotation[3][j % 4] = 1.0f;
    for (int c = 0; c < 3; c++) pd_anim[j / 4].scale[c][j % 4] = 1.5f;
  }
  static sinew_soa_transform start_pose[2];
  memcpy(start_pose, pd_anim, sizeof start_pose);
  float theta0[PD_JOINTS];
  for (size_t j = 0; j < PD_JOINTS; j++) {
    theta0[j] = 0.1f + 0.2f * (float)j;
    const float qz[4] = {0.0f, 0.0f, sinf(theta0[j] / 2.0f), cosf(theta0[j] / 2.0f)};
    pd_pose_rotation(start_pose, j, qz);
  }
  CHECK(sinew_pd_reset(start_pose, 2, pd.state, PD_JOINTS), OK);
  for (size_t j = 0; j < PD_JOINTS; j++) {
    expect_near("reset angle", pd_angle_z(&pd.state[j]), theta0[j], 1e-6);
    REQUIRE(pd.state[j].angular_velocity[0] == 0.0f && pd.state[j].angular_velocity[2] == 0.0f);
  }

  /* Joints 0-2 fully simulated, 3 at weight 0, 4 at weight 0.5. Twelve
   * frames of 1/60 s (one half-life), each four sub-steps of 1/240 s of
   * w += (kp e - kd w) / I h, theta += w h with e = -theta. */
  sinew_pd_joint joints[PD_JOINTS];
  for (size_t j = 0; j < PD_JOINTS; j++) joints[j] = hl;
  joints[3].weight = 0.0f;
  joints[4].weight = 0.5f;
  double theta[PD_JOINTS], omega[PD_JOINTS];
  for (size_t j = 0; j < PD_JOINTS; j++) theta[j] = theta0[j], omega[j] = 0.0;
  for (int f = 0; f < 12; f++) {
    CHECK(sinew_pd_step(joints, PD_JOINTS, pd_anim, 2, 1.0f / 60.0f, 1.0f / 240.0f, 16, pd.state,
                        PD_JOINTS, pd.out, 2, &pd.report),
          OK);
    REQUIRE(pd.report.count == 4 && pd.report.dropped == 0.0f);
    expect_near("PD sub-step", pd.report.step, 1.0 / 240.0, 1e-9);
    for (size_t j = 0; j < PD_JOINTS; j++)
      for (int k = 0; k < 4; k++) {
        const double h = pd.report.step;
        omega[j] += (hl.kp * -theta[j] - hl.kd * omega[j]) / inertia * h;
        theta[j] += omega[j] * h;
      }
  }
  for (size_t j = 0; j < PD_JOINTS; j++) {
    expect_near("PD angle", pd_angle_z(&pd.state[j]), theta[j], 2e-5);
    expect_near("PD angular velocity", pd.state[j].angular_velocity[2], omega[j], 2e-4);
    /* Near the linear spring of the same half-life: 0.597 of it left. */
    expect_near("PD half-life", theta[j] / theta0[j], (1.0 + 2.0 * log(2.0)) / 4.0, 0.02);
  }
  for (size_t j = 0; j < 3; j++)
    for (int c = 0; c < 4; c++)
      REQUIRE(pd.out[j / 4].rotation[c][j % 4] == pd.state[j].rotation[c]);
  for (int c = 0; c < 4; c++)
    REQUIRE(pd.out[0].rotation[c][3] == pd_anim[0].rotation[c][3]);
  const float half = 2.0f * atan2f(pd.out[1].rotation[2][0], pd.out[1].rotation[3][0]);
  expect_near("PD weight 0.5", half, pd_angle_z(&pd.state[4]) / 2.0, 1e-3);
  for (int r = 0; r < 3; r++)
    for (size_t l = 0; l < 8; l++)
      REQUIRE(pd.out[l / 4].translation[r][l % 4] == pd_anim[l / 4].translation[r][l % 4] &&
              pd.out[l / 4].scale[r][l % 4] == 1.5f);

  /* A hitch: 5 s is 16 sub-steps of 1/240 s and the rest dropped. */
  CHECK(sinew_pd_step(joints, PD_JOINTS, pd_anim, 2, 5.0f, 1.0f / 240.0f, 16, pd.state,
                      PD_JOINTS, pd.out, 2, &pd.report),
        OK);
  REQUIRE(pd.report.count == 16);
  expect_near("PD dropped", pd.report.dropped, 5.0 - 16.0 / 240.0, 1e-5);
  CHECK(sinew_pd_step(joints, PD_JOINTS, pd_anim, 2, 1.0f / 60.0f, 1.0f / 240.0f, 16, pd.state,
                      PD_JOINTS, pd.out, 2, NULL),
        OK);

  /* Constructors out of range. */
  sinew_pd_joint j0 = crit;
  CHECK_KEEPS(sinew_pd_joint_critical(-1.0f, mass, length, &j0), BAD, j0);
  CHECK_KEEPS(sinew_pd_joint_critical(NAN, mass, length, &j0), BAD, j0);
  CHECK_KEEPS(sinew_pd_joint_critical(1.0f, 0.0f, length, &j0), BAD, j0);
  CHECK_KEEPS(sinew_pd_joint_critical(1.0f, mass, 0.0f, &j0), BAD, j0); /* zero-length bone */
  CHECK_KEEPS(sinew_pd_joint_critical(1e30f, mass, length, &j0), BAD, j0);
  CHECK_KEEPS(sinew_pd_joint_from_half_life(0.0f, mass, length, &j0), BAD, j0);
  CHECK_KEEPS(sinew_pd_joint_from_half_life(-0.1f, mass, length, &j0), BAD, j0);
  CHECK_KEEPS(sinew_pd_joint_from_half_life(NAN, mass, length, &j0), BAD, j0);
  CHECK_KEEPS(sinew_pd_joint_from_half_life(0.1f, mass, -1.0f, &j0), BAD, j0);
  CHECK(sinew_pd_joint_critical(1.0f, mass, length, NULL), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_pd_joint_from_half_life(0.1f, mass, length, NULL), SINEW_STATUS_NULL_PARAMETER);

  /* Reset and bone lengths. */
  CHECK_KEEPS(sinew_pd_reset(start_pose, 1, pd.state, PD_JOINTS), SINEW_STATUS_BAD_LENGTH, pd);
  CHECK_KEEPS(sinew_pd_reset(NULL, 2, pd.state, PD_JOINTS), SINEW_STATUS_NULL_PARAMETER, pd);
  CHECK_KEEPS(sinew_pd_reset(pd.out, 2, (sinew_pd_state *)(void *)pd.out, PD_JOINTS),
              SINEW_STATUS_OVERLAPPING_BUFFERS, pd);
  CHECK_KEEPS(sinew_pd_rest_bone_lengths(&ik_skel, bone_lengths, ik_skel.joint_count - 1),
              SINEW_STATUS_BAD_LENGTH, bone_lengths);
  CHECK(sinew_pd_rest_bone_lengths(&ik_skel, NULL, ik_skel.joint_count),
        SINEW_STATUS_NULL_PARAMETER);
  sinew_skeleton forged = ik_skel;
  forged.joint_count += 1;
  CHECK_KEEPS(sinew_pd_rest_bone_lengths(&forged, bone_lengths, ik_skel.joint_count),
              SINEW_STATUS_INVALID_HANDLE, bone_lengths);

  /* Stepping: every bad setting, length, value and overlap. */
#define PD_STEP(js, n, anim, anim_len, dt, max_step, max_n, st, st_len, out, out_len)   \
  sinew_pd_step((js), (n), (anim), (anim_len), (dt), (max_step), (max_n), (st), (st_len), \
                (out), (out_len), &pd.report)
  const sinew_pd_joint good = hl;
  sinew_pd_joint bad[8];
  for (int i = 0; i < 8; i++) bad[i] = good;
  bad[0].kp = -1.0f;
  bad[1].kd = NAN;
  bad[2].mass = 0.0f;
  bad[3].length = 0.0f;
  bad[4].torque_limit = -1.0f;
  bad[5].weight = 1.5f;
  bad[6].kp = 1e30f;
  bad[7].length = NAN;
  for (int i = 0; i < 8; i++) {
    joints[2] = bad[i];
    CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                        pd.out, 2),
                BAD, pd);
  }
  joints[2] = good;
  for (int i = 0; i < 4; i++) {
    CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, bad_dt4(i), 0.004f, 16, pd.state,
                        PD_JOINTS, pd.out, 2),
                BAD, pd);
    CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, bad_dt4(i), 16, pd.state,
                        PD_JOINTS, pd.out, 2),
                BAD, pd);
  }
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 0, pd.state, PD_JOINTS,
                      pd.out, 2),
              BAD, pd);
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS - 1,
                      pd.out, 2),
              SINEW_STATUS_BAD_LENGTH, pd);
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 1, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                      pd.out, 2),
              SINEW_STATUS_BAD_LENGTH, pd);
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                      pd.out, 1),
              SINEW_STATUS_BAD_LENGTH, pd);
  CHECK_KEEPS(PD_STEP(NULL, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                      pd.out, 2),
              SINEW_STATUS_NULL_PARAMETER, pd);
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                      (sinew_soa_transform *)(void *)(scratch + 4), 2),
              SINEW_STATUS_MISALIGNED, pd);
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                      pd_anim, 2),
              SINEW_STATUS_OVERLAPPING_BUFFERS, pd);
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16,
                      (sinew_pd_state *)(void *)pd.out, PD_JOINTS, pd.out, 2),
              SINEW_STATUS_OVERLAPPING_BUFFERS, pd);
  CHECK_KEEPS(sinew_pd_step(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16, pd.state,
                            PD_JOINTS, pd.out, 2, (sinew_substeps *)(void *)pd.state),
              SINEW_STATUS_OVERLAPPING_BUFFERS, pd);
  static sinew_soa_transform nan_anim[2], zero_anim[2];
  memcpy(nan_anim, pd_anim, sizeof nan_anim);
  memcpy(zero_anim, pd_anim, sizeof zero_anim);
  nan_anim[1].rotation[0][0] = NAN;
  zero_anim[0].rotation[3][2] = 0.0f;
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, nan_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                      pd.out, 2),
              BAD, pd);
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, zero_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                      pd.out, 2),
              BAD, pd);
  pd.state[1].angular_velocity[0] = NAN;
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                      pd.out, 2),
              BAD, pd);
  pd.state[1].angular_velocity[0] = 0.0f;
  memset(pd.state[3].rotation, 0, sizeof pd.state[3].rotation);
  CHECK_KEEPS(PD_STEP(joints, PD_JOINTS, pd_anim, 2, 0.01f, 0.004f, 16, pd.state, PD_JOINTS,
                      pd.out, 2),
              BAD, pd);
#undef PD_STEP
}

/* Spring-bone chains on a built four-joint chain along +X (bones 0.3, 0.3,
 * 0.2) at height 1: without stiffness and with full drag, each frame moves
 * every particle down by g h^2 and puts it back at its bone length from its
 * parent, which the test repeats in double; with colliders, the report's
 * penetration is the one measured here. Then every error path. */
static alignas(16) uint8_t chain_bytes[1024], flat_bytes[1024];
static sinew_skeleton chain_skel;
static struct {
  sinew_soa_transform local[1];
  sinew_float4x4 models[4];
  float cur[4][3], prev[4][3];
  sinew_chain_report report;
} ch;

static void chain_pose(void) {
  memcpy(ch.local, chain_skel.rest_pose, sizeof ch.local);
  CHECK(sinew_skeleton_local_to_model(&chain_skel, ch.local, 1, NULL, ch.models, 4),
        SINEW_STATUS_OK);
}

static void build_chain(sinew_skeleton *out, uint8_t *bytes, size_t size, size_t n,
                        const float (*offsets)[3]) {
  static const char *names[4] = {"root", "a", "b", "c"};
  sinew_joint_def defs[4];
  memset(defs, 0, sizeof defs);
  for (size_t j = 0; j < n; j++) {
    defs[j].name = names[j];
    defs[j].name_len = strlen(names[j]);
    defs[j].parent = j == 0 ? SINEW_NO_PARENT : (uint16_t)(j - 1);
    memcpy(defs[j].translation, offsets[j], sizeof offsets[j]);
    defs[j].rotation[3] = 1.0f;
    defs[j].scale[0] = defs[j].scale[1] = defs[j].scale[2] = 1.0f;
  }
  size_t written = 0;
  CHECK(sinew_skeleton_build(defs, n, bytes, size, NULL, 0, &written), SINEW_STATUS_OK);
  CHECK(sinew_skeleton_load(bytes, written, out), SINEW_STATUS_OK);
}

/* How deep a particle is inside `c` (negative: how far outside). */
static double collider_depth(const sinew_collider *c, const float *p) {
  double d;
  if (c->kind == SINEW_COLLIDER_PLANE) {
    d = c->offset - (c->a[0] * p[0] + c->a[1] * p[1] + c->a[2] * p[2]);
  } else {
    double ab[3], ap[3], t = 0.0, len2 = 0.0, q[3], dist = 0.0;
    for (int k = 0; k < 3; k++) {
      ab[k] = (c->kind == SINEW_COLLIDER_CAPSULE ? c->b[k] : c->a[k]) - c->a[k];
      ap[k] = p[k] - c->a[k];
      t += ab[k] * ap[k];
      len2 += ab[k] * ab[k];
    }
    t = len2 > 0.0 ? fmin(1.0, fmax(0.0, t / len2)) : 0.0;
    for (int k = 0; k < 3; k++) q[k] = p[k] - (c->a[k] + t * ab[k]), dist += q[k] * q[k];
    d = c->radius - sqrt(dist);
  }
  return d;
}

static void spring_chains(void) {
  const sinew_status OK = SINEW_STATUS_OK, BAD = SINEW_STATUS_INVALID_ARGUMENT;
  static const float offsets[4][3] = {{0, 1, 0}, {0.3f, 0, 0}, {0.3f, 0, 0}, {0.2f, 0, 0}};
  build_chain(&chain_skel, chain_bytes, sizeof chain_bytes, 4, offsets);
  const size_t joints[4] = {0, 1, 2, 3};
  const double lengths[4] = {0.0, 0.3, 0.3, 0.2};
  sinew_ik_pose pose = {&chain_skel, ch.local, 1, NULL, ch.models, 4};

  sinew_chain_settings d;
  CHECK(sinew_chain_settings_default(&d), OK);
  REQUIRE(d.stiffness == 0.1f && d.drag == 0.05f && d.gravity[1] == -9.81f &&
          d.max_substeps == 8 && d.iterations == 4 && d.tolerance == 1e-4f && d.radius == 0.0f);
  expect_near("default max_angle", d.max_angle, acos(-1.0), 1e-6);
  expect_near("default max_step", d.max_step, 1.0 / 120.0, 1e-9);
  CHECK(sinew_chain_settings_default(NULL), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_spring_chain_check(&chain_skel, joints, 4), OK);

  /* Free and fully damped: fall by g h^2, back onto the bone lengths. */
  sinew_chain_settings s = d;
  s.stiffness = 0.0f;
  s.drag = 1.0f;
  s.max_step = 1.0f / 60.0f;
  sinew_spring_chain chain = {joints, 4, s, NULL, NULL, 0, NULL, 0};
  chain_pose();
  CHECK(sinew_spring_chain_reset(&pose, &chain, ch.cur, 4, ch.prev, 4), OK);
  double x[4][3];
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 3; k++) {
      x[i][k] = ch.models[i].cols[3][k];
      REQUIRE(ch.cur[i][k] == ch.models[i].cols[3][k] && ch.prev[i][k] == ch.cur[i][k]);
    }
  const double h = 1.0 / 60.0, drop = 9.81 * h * h;
  for (int f = 0; f < 5; f++) {
    chain_pose();
    CHECK(sinew_spring_chain_step(&pose, &chain, 1.0f / 60.0f, ch.cur, 4, ch.prev, 4, &ch.report),
          OK);
    for (int i = 1; i < 4; i++) {
      x[i][1] -= drop;
      double d3[3], l = 0.0;
      for (int k = 0; k < 3; k++) d3[k] = x[i][k] - x[i - 1][k], l += d3[k] * d3[k];
      l = sqrt(l);
      for (int k = 0; k < 3; k++) x[i][k] = x[i - 1][k] + d3[k] / l * lengths[i];
    }
    REQUIRE(ch.report.steps.count == 1 && ch.report.steps.dropped == 0.0f &&
            ch.report.passes == 1 && ch.report.penetration == 0.0f);
  }
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 3; k++) {
      expect_near("chain particle", ch.cur[i][k], x[i][k], 1e-5);
      /* The pose was turned onto the particles. */
      expect_near("chain joint", ch.models[i].cols[3][k], x[i][k], 1e-5);
    }
  REQUIRE(x[3][1] < 1.0 - 4.0 * drop); /* it did fall */

  /* Colliders: a plane, a capsule and a sphere under the chain; the
   * report's penetration is the deepest measured here, and the particles
   * keep their bone lengths. */
  const sinew_collider shapes[3] = {
      {SINEW_COLLIDER_PLANE, {0, 1, 0}, {0, 0, 0}, 0.0f, 0.95f},
      {SINEW_COLLIDER_CAPSULE, {-1, 0.85f, 0}, {2, 0.85f, 0}, 0.1f, 0.0f},
      {SINEW_COLLIDER_SPHERE, {0.25f, 0.7f, 0}, {0, 0, 0}, 0.25f, 0.0f},
  };
  sinew_chain_settings loose = d;
  loose.stiffness = 0.0f;
  for (int c = 0; c < 3; c++) {
    chain = (sinew_spring_chain){joints, 4, loose, NULL, &shapes[c], 1, NULL, 0};
    chain_pose();
    CHECK(sinew_spring_chain_reset(&pose, &chain, ch.cur, 4, ch.prev, 4), OK);
    for (int f = 0; f < 90; f++) {
      chain_pose();
      CHECK(sinew_spring_chain_step(&pose, &chain, 1.0f / 60.0f, ch.cur, 4, ch.prev, 4,
                                    &ch.report),
            OK);
    }
    double deepest = -INFINITY;
    for (int i = 1; i < 4; i++) {
      deepest = fmax(deepest, collider_depth(&shapes[c], ch.cur[i]));
      expect_near("chain bone length", dist3(ch.cur[i], ch.cur[i - 1]), lengths[i], 1e-5);
    }
    /* Resting on the shape: touching it, not inside. */
    REQUIRE(deepest > -1e-3 && deepest < 1e-3);
    expect_near("chain penetration", ch.report.penetration, fmax(deepest, 0.0), 1e-5);
    REQUIRE(ch.report.passes >= 1 && ch.report.steps.count == 2);
  }
  /* Without colliders the chain swings lower than all three hold it. */
  chain = (sinew_spring_chain){joints, 4, loose, NULL, NULL, 0, NULL, 0};
  CHECK(sinew_spring_chain_reset(&pose, &chain, ch.cur, 4, ch.prev, 4), OK);
  for (int f = 0; f < 90; f++) {
    chain_pose();
    CHECK(sinew_spring_chain_step(&pose, &chain, 1.0f / 60.0f, ch.cur, 4, ch.prev, 4, NULL), OK);
  }
  REQUIRE(ch.cur[2][1] < 0.9f);

  /* A hitch: 1 s is 8 sub-steps of 1/120 s and the rest dropped. */
  chain_pose();
  CHECK(sinew_spring_chain_step(&pose, &chain, 1.0f, ch.cur, 4, ch.prev, 4, &ch.report), OK);
  REQUIRE(ch.report.steps.count == 8);
  expect_near("chain dropped", ch.report.steps.dropped, 1.0 - 8.0 / 120.0, 1e-6);

  /* Chain checks. */
  static const float flat[2][3] = {{0, 1, 0}, {0, 0, 0}};
  sinew_skeleton flat_skel;
  build_chain(&flat_skel, flat_bytes, sizeof flat_bytes, 2, flat);
  const size_t pair[2] = {0, 1}, skip[2] = {0, 2}, far_[2] = {0, 9};
  size_t many[33];
  for (int i = 0; i < 33; i++) many[i] = 0;
  CHECK(sinew_spring_chain_check(NULL, joints, 4), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_spring_chain_check(&chain_skel, NULL, 4), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_spring_chain_check(&chain_skel, joints, 1), SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_spring_chain_check(&chain_skel, many, 33), SINEW_STATUS_CAPACITY_EXCEEDED);
  CHECK(sinew_spring_chain_check(&chain_skel, far_, 2), SINEW_STATUS_OUT_OF_RANGE);
  CHECK(sinew_spring_chain_check(&chain_skel, skip, 2), SINEW_STATUS_NOT_A_CHAIN);
  CHECK(sinew_spring_chain_check(&flat_skel, pair, 2), SINEW_STATUS_ZERO_LENGTH_BONE);
  sinew_skeleton forged = chain_skel;
  forged.check ^= 1;
  CHECK(sinew_spring_chain_check(&forged, joints, 4), SINEW_STATUS_INVALID_HANDLE);

  /* Reset errors leave the state alone. */
  chain = (sinew_spring_chain){joints, 4, d, NULL, NULL, 0, NULL, 0};
  chain_pose();
  CHECK(sinew_spring_chain_reset(&pose, &chain, ch.cur, 4, ch.prev, 4), OK);
  CHECK_KEEPS(sinew_spring_chain_reset(&pose, &chain, ch.cur, 3, ch.prev, 4),
              SINEW_STATUS_BAD_LENGTH, ch);
  CHECK_KEEPS(sinew_spring_chain_reset(&pose, &chain, ch.cur, 4, ch.cur, 4),
              SINEW_STATUS_OVERLAPPING_BUFFERS, ch);
  CHECK_KEEPS(sinew_spring_chain_reset(&pose, NULL, ch.cur, 4, ch.prev, 4),
              SINEW_STATUS_NULL_PARAMETER, ch);
  CHECK_KEEPS(sinew_spring_chain_reset(NULL, &chain, ch.cur, 4, ch.prev, 4),
              SINEW_STATUS_NULL_PARAMETER, ch);
  sinew_float4x4 world;
  memset(&world, 0, sizeof world);
  chain.world = &world;
  CHECK_KEEPS(sinew_spring_chain_reset(&pose, &chain, ch.cur, 4, ch.prev, 4),
              SINEW_STATUS_SINGULAR_TRANSFORM, ch);
  for (int c = 0; c < 4; c++) world.cols[c][c] = 1.0f;
  world.cols[3][1] = NAN;
  CHECK_KEEPS(sinew_spring_chain_reset(&pose, &chain, ch.cur, 4, ch.prev, 4), BAD, ch);
  world.cols[3][1] = 2.0f;
  CHECK(sinew_spring_chain_reset(&pose, &chain, ch.cur, 4, ch.prev, 4), OK);
  expect_near("chain world", ch.cur[3][1], 3.0, 1e-6);
  chain.world = NULL;
  CHECK(sinew_spring_chain_reset(&pose, &chain, ch.cur, 4, ch.prev, 4), OK);

  /* Step errors leave the pose, the matrices, the state and the report
   * alone. */
#define CHAIN_STEP(c, dt) \
  sinew_spring_chain_step(&pose, (c), (dt), ch.cur, 4, ch.prev, 4, &ch.report)
  sinew_chain_settings bad_settings[10];
  for (int i = 0; i < 10; i++) bad_settings[i] = d;
  bad_settings[0].stiffness = 1.5f;
  bad_settings[1].drag = NAN;
  bad_settings[2].gravity[1] = NAN;
  bad_settings[3].wind[0] = INFINITY;
  bad_settings[4].radius = -1.0f;
  bad_settings[5].max_angle = 4.0f;
  bad_settings[6].max_step = 0.0f;
  bad_settings[7].max_substeps = 0;
  bad_settings[8].iterations = 0;
  bad_settings[9].tolerance = -1.0f;
  for (int i = 0; i < 10; i++) {
    sinew_spring_chain b = {joints, 4, bad_settings[i], NULL, NULL, 0, NULL, 0};
    CHECK_KEEPS(CHAIN_STEP(&b, 1.0f / 60.0f), BAD, ch);
  }
  for (int i = 0; i < 4; i++) CHECK_KEEPS(CHAIN_STEP(&chain, bad_dt4(i)), BAD, ch);
  sinew_collider bad_shapes[5] = {shapes[0], shapes[1], shapes[2], shapes[0], shapes[2]};
  bad_shapes[0].kind = 7;
  bad_shapes[1].b[2] = NAN;
  bad_shapes[2].radius = -1.0f;
  bad_shapes[3].a[1] = 2.0f; /* plane normal not of unit length */
  bad_shapes[4].a[0] = INFINITY;
  for (int i = 0; i < 5; i++) {
    sinew_spring_chain b = {joints, 4, d, NULL, &bad_shapes[i], 1, NULL, 0};
    CHECK_KEEPS(CHAIN_STEP(&b, 1.0f / 60.0f), BAD, ch);
  }
  sinew_collider seventeen[17];
  for (int i = 0; i < 17; i++) seventeen[i] = shapes[0];
  sinew_spring_chain b = {joints, 4, d, NULL, seventeen, 17, NULL, 0};
  CHECK_KEEPS(CHAIN_STEP(&b, 1.0f / 60.0f), SINEW_STATUS_CAPACITY_EXCEEDED, ch);
  const float limits[3] = {0.5f, 4.0f, 0.5f};
  b = (sinew_spring_chain){joints, 4, d, NULL, NULL, 0, limits, 2};
  CHECK_KEEPS(CHAIN_STEP(&b, 1.0f / 60.0f), SINEW_STATUS_BAD_LENGTH, ch);
  b.angle_limits_len = 3;
  CHECK_KEEPS(CHAIN_STEP(&b, 1.0f / 60.0f), BAD, ch);
  b = (sinew_spring_chain){skip, 2, d, NULL, NULL, 0, NULL, 0};
  CHECK_KEEPS(CHAIN_STEP(&b, 1.0f / 60.0f), SINEW_STATUS_NOT_A_CHAIN, ch);
  b = (sinew_spring_chain){far_, 2, d, NULL, NULL, 0, NULL, 0};
  CHECK_KEEPS(CHAIN_STEP(&b, 1.0f / 60.0f), SINEW_STATUS_OUT_OF_RANGE, ch);
  b = (sinew_spring_chain){joints, 4, d, &world, NULL, 0, NULL, 0};
  world.cols[0][0] = 0.0f;
  CHECK_KEEPS(CHAIN_STEP(&b, 1.0f / 60.0f), SINEW_STATUS_SINGULAR_TRANSFORM, ch);
  CHECK_KEEPS(CHAIN_STEP(NULL, 1.0f / 60.0f), SINEW_STATUS_NULL_PARAMETER, ch);
  CHECK_KEEPS(sinew_spring_chain_step(&pose, &chain, 0.01f, ch.cur, 3, ch.prev, 3, &ch.report),
              SINEW_STATUS_BAD_LENGTH, ch);
  CHECK_KEEPS(sinew_spring_chain_step(&pose, &chain, 0.01f, ch.cur, 4, ch.prev, 4,
                                      (sinew_chain_report *)(void *)ch.cur),
              SINEW_STATUS_OVERLAPPING_BUFFERS, ch);
  CHECK_KEEPS(sinew_spring_chain_step(&pose, &chain, 0.01f, (float(*)[3])(void *)ch.models, 4,
                                      ch.prev, 4, &ch.report),
              SINEW_STATUS_OVERLAPPING_BUFFERS, ch);
  ch.prev[2][0] = NAN;
  CHECK_KEEPS(CHAIN_STEP(&chain, 0.01f), BAD, ch);
  ch.prev[2][0] = 0.6f;
  ch.models[1].cols[3][2] = NAN;
  CHECK_KEEPS(CHAIN_STEP(&chain, 0.01f), BAD, ch);
  /* Joints 1 and 2 animated at the same place. */
  chain_pose();
  memcpy(ch.models[2].cols[3], ch.models[1].cols[3], sizeof ch.models[1].cols[3]);
  CHECK_KEEPS(CHAIN_STEP(&chain, 0.01f), SINEW_STATUS_ZERO_LENGTH_BONE, ch);
  chain_pose();
  CHECK(CHAIN_STEP(&chain, 0.01f), OK);
#undef CHAIN_STEP
}

static void secondary(void) {
  springs();
  pd_controllers();
  spring_chains();
}

/* A track set written by the Rust side: find, describe and sample a
 * track (random access and with a cursor), sample them all, refuse bad
 * input. */
static alignas(16) uint8_t track_bytes[1 << 16];
static void track_set_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) exit(1);
  size_t len = fread(track_bytes, 1, sizeof track_bytes, f);
  fclose(f);
  sinew_track_set set;
  CHECK(sinew_track_set_load(track_bytes, len, &set), SINEW_STATUS_OK);
  uint32_t fov = 99;
  CHECK(sinew_track_set_find(&set, (const uint8_t *)"fov", 3, &fov), SINEW_STATUS_OK);
  sinew_track_info info;
  CHECK(sinew_track_set_info(&set, fov, &info), SINEW_STATUS_OK);
  if (fov != 0 || info.kind != SINEW_TRACK_FLOAT || info.key_count != 4 || info.target != 7 ||
      info.name_len != 3 || memcmp(info.name, "fov", 3) != 0) {
    fprintf(stderr, "track info wrong\n");
    exit(1);
  }
  float v = 0.0f, w = 0.0f;
  size_t cursor = 0;
  CHECK(sinew_track_set_sample(&set, fov, 0.37f, NULL, &v, 1), SINEW_STATUS_OK);
  for (int i = 0; i <= 37; i++)
    CHECK(sinew_track_set_sample(&set, fov, i / 100.0f, &cursor, &w, 1), SINEW_STATUS_OK);
  if (v != w) {
    fprintf(stderr, "cursor %.9g vs random %.9g\n", (double)w, (double)v);
    exit(1);
  }
  printf("track_fov %.9g\n", (double)v);
  float all[16];
  size_t cursors[3] = {0, 0, 0};
  CHECK(sinew_track_set_sample_all(&set, 0.37f, cursors, 3, all, set.component_count),
        SINEW_STATUS_OK);
  printf("track_all_sum %.17g\ntrack_components %u\n", sum_floats(all, set.component_count),
         set.component_count);
  float q[4];
  CHECK(sinew_track_set_sample(&set, 2, 0.5f, NULL, q, 4), SINEW_STATUS_OK);
  CHECK(sinew_track_set_sample(&set, 2, 0.5f, NULL, q, 3), SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_track_set_sample(&set, 3, 0.5f, NULL, q, 1), SINEW_STATUS_OUT_OF_RANGE);
  CHECK(sinew_track_set_sample(&set, 0, NAN, NULL, q, 1), SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_track_set_sample_all(&set, 0.1f, cursors, 2, all, set.component_count),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_track_set_sample_all(&set, 0.1f, cursors, 3, all, 3), SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_track_set_find(&set, (const uint8_t *)"zoom", 4, &fov), SINEW_STATUS_NOT_FOUND);
  CHECK(sinew_track_set_info(&set, 3, &info), SINEW_STATUS_OUT_OF_RANGE);
  sinew_track_set forged = set;
  forged.track_count = 9;
  CHECK(sinew_track_set_sample(&forged, 0, 0.5f, NULL, q, 1), SINEW_STATUS_INVALID_HANDLE);
  track_bytes[0] ^= 1;
  CHECK(sinew_track_set_load(track_bytes, len, &set), SINEW_STATUS_INVALID_DATA);
  CHECK(sinew_track_set_load(track_bytes, 0, &set), SINEW_STATUS_NULL_PARAMETER);
}

/* Event tracks: triggering across a loop wrap, backwards, into a short
 * buffer, and every bad input. */
static void events(void) {
  static const char names[] = "stepswing";
  sinew_event ev[3] = {
      {0.0f, 0.0f, 10, 0, 0},
      {0.2f, 0.8f, 12, 4, 5},
      {0.5f, 0.5f, 11, 0, 4},
  };
  uint32_t ranges[1];
  size_t n = 99;
  CHECK(sinew_event_sort_range_ends(ev, 3, ranges, 0, &n), SINEW_STATUS_BUFFER_TOO_SMALL);
  CHECK(sinew_event_sort_range_ends(ev, 3, ranges, 1, &n), SINEW_STATUS_OK);
  if (n != 1 || ranges[0] != 1) {
    fprintf(stderr, "sort_range_ends wrote %zu entries\n", n);
    exit(1);
  }
  sinew_event_track track = {1.0f, ev, 3, (const uint8_t *)names, 9, ranges, 1};
  sinew_edge out[8];
  sinew_triggered r;
  /* 0.9 -> 2.1 looping: 1.0 (id 10), 1.2 enter, 1.5 (id 11), 1.8 leave, 2.0 (id 10). */
  CHECK(sinew_event_trigger(&track, 0.9f, 2.1f, SINEW_TIME_LOOP, out, 8, &r), SINEW_STATUS_OK);
  const uint32_t ids[5] = {10, 12, 11, 12, 10};
  const uint32_t kinds[5] = {SINEW_EDGE_INSTANT, SINEW_EDGE_ENTER, SINEW_EDGE_INSTANT,
                             SINEW_EDGE_LEAVE, SINEW_EDGE_INSTANT};
  const int32_t cycles[5] = {1, 1, 1, 1, 2};
  if (r.written != 5 || r.dropped != 0) {
    fprintf(stderr, "trigger wrote %llu, dropped %llu\n", (unsigned long long)r.written,
            (unsigned long long)r.dropped);
    exit(1);
  }
  for (int i = 0; i < 5; i++) {
    if (out[i].id != ids[i] || out[i].kind != kinds[i] || out[i].cycle != cycles[i] ||
        out[i].forward != 1) {
      fprintf(stderr, "edge %d: id %u kind %u cycle %d forward %u\n", i, out[i].id, out[i].kind,
              out[i].cycle, out[i].forward);
      exit(1);
    }
  }
  /* Backwards over the same span: the reverse order, a range's end entered. */
  CHECK(sinew_event_trigger(&track, 2.1f, 0.9f, SINEW_TIME_LOOP, out, 8, &r), SINEW_STATUS_OK);
  if (r.written != 5 || out[0].id != 10 || out[1].kind != SINEW_EDGE_ENTER || out[1].id != 12 ||
      out[0].forward != 0) {
    fprintf(stderr, "backwards trigger wrong\n");
    exit(1);
  }
  /* A short buffer keeps the first edges and counts the rest. */
  CHECK(sinew_event_trigger(&track, 0.9f, 2.1f, SINEW_TIME_LOOP, out, 3, &r), SINEW_STATUS_OK);
  if (r.written != 3 || r.dropped != 2 || out[2].id != 11) {
    fprintf(stderr, "short buffer: %llu + %llu\n", (unsigned long long)r.written,
            (unsigned long long)r.dropped);
    exit(1);
  }
  /* Clamped: nothing repeats. */
  CHECK(sinew_event_trigger(&track, 0.9f, 2.1f, SINEW_TIME_CLAMP, out, 8, &r), SINEW_STATUS_OK);
  if (r.written != 0) {
    fprintf(stderr, "clamped trigger past the end wrote %llu\n", (unsigned long long)r.written);
    exit(1);
  }
  sinew_triggered keep = {77, 77};
  CHECK(sinew_event_trigger(&track, NAN, 1.0f, SINEW_TIME_LOOP, out, 8, &keep),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_event_trigger(&track, 0.0f, 1.0f, 7, out, 8, &keep), SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_event_trigger(&track, 0.0f, 1.0f, SINEW_TIME_LOOP, out, 8, NULL),
        SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_event_trigger(NULL, 0.0f, 1.0f, SINEW_TIME_LOOP, out, 8, &keep),
        SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_event_trigger(&track, 0.0f, 1.0f, SINEW_TIME_LOOP, NULL, 8, &keep),
        SINEW_STATUS_NULL_PARAMETER);
  sinew_event_track bad = track;
  bad.range_count = 0; /* the range event is missing from `ranges` */
  CHECK(sinew_event_trigger(&bad, 0.0f, 1.0f, SINEW_TIME_LOOP, out, 8, &keep),
        SINEW_STATUS_INVALID_ARGUMENT);
  bad = track;
  bad.names_len = 6; /* "swing" runs past the table */
  CHECK(sinew_event_trigger(&bad, 0.0f, 1.0f, SINEW_TIME_LOOP, out, 8, &keep),
        SINEW_STATUS_INVALID_ARGUMENT);
  sinew_event unsorted[3] = {ev[2], ev[0], ev[1]};
  bad = track;
  bad.events = unsorted;
  CHECK(sinew_event_trigger(&bad, 0.0f, 1.0f, SINEW_TIME_LOOP, out, 8, &keep),
        SINEW_STATUS_INVALID_ARGUMENT);
  bad = track;
  bad.duration = NAN;
  CHECK(sinew_event_trigger(&bad, 0.0f, 1.0f, SINEW_TIME_LOOP, out, 8, &keep),
        SINEW_STATUS_INVALID_ARGUMENT);
  if (keep.written != 77 || keep.dropped != 77) {
    fprintf(stderr, "a failed trigger wrote its result\n");
    exit(1);
  }
}

/* The player: a walk, a cross-fade to the jog and an inertialization back,
 * over caller buffers; a changed state word and bad arguments are refused. */
static void player(void) {
  sinew_skeleton skel;
  sinew_clip walk, jog;
  size_t size = 0;
  CHECK(sinew_skeleton_load(skeleton_bytes, SINEW_HUMANOID_SKELETON_SIZE, &skel), SINEW_STATUS_OK);
  /* The earlier checks corrupt the clip buffers on purpose: write them again. */
  CHECK(sinew_humanoid_clip_write(&skel, SINEW_GAIT_WALK, 30.0f, walk_bytes, sizeof walk_bytes,
                                  &size),
        SINEW_STATUS_OK);
  CHECK(sinew_clip_load(walk_bytes, size, &walk), SINEW_STATUS_OK);
  CHECK(sinew_humanoid_clip_write(&skel, SINEW_GAIT_JOG, 30.0f, jog_bytes, sizeof jog_bytes,
                                  &size),
        SINEW_STATUS_OK);
  CHECK(sinew_clip_load(jog_bytes, size, &jog), SINEW_STATUS_OK);
  sinew_clip_ref clips[2] = {{&walk, NULL}, {&jog, NULL}};

  sinew_player_sizes sizes;
  CHECK(sinew_player_buffer_sizes(skel.soa_count, &sizes), SINEW_STATUS_OK);
  sinew_soa_transform *sources = aligned_alloc(16, sizes.sources * sizeof *sources);
  sinew_soa_transform *history = aligned_alloc(16, sizes.history * sizeof *history);
  sinew_soa_transform *scratch_pose = aligned_alloc(16, sizes.scratch * sizeof *scratch_pose);
  sinew_inertial_block *inertial = aligned_alloc(16, sizes.inertial * sizeof *inertial);
  sinew_player_buffers bufs = {sources, sizes.sources, history,      sizes.history,
                               inertial, sizes.inertial, scratch_pose, sizes.scratch};
  sinew_player p;
  CHECK(sinew_player_init(&p, clips, 2, 0, SINEW_PLAY_LOOP), SINEW_STATUS_OK);
  sinew_player_edge edges[8];
  sinew_player_report report;
  sinew_player_info info;
  for (int f = 0; f < 60; f++) {
    if (f == 10) {
      sinew_transition fade = {0.25f, SINEW_BLEND_CROSSFADE, SINEW_FADE_SMOOTH_STEP, 0.0f};
      CHECK(sinew_player_play(&p, clips, 2, 1, SINEW_PLAY_LOOP, &fade), SINEW_STATUS_OK);
    }
    if (f == 40) {
      sinew_transition back = {0.2f, SINEW_BLEND_INERTIALIZE, SINEW_DECAY_QUINTIC, 0.0f};
      CHECK(sinew_player_play(&p, clips, 2, 0, SINEW_PLAY_PING_PONG, &back), SINEW_STATUS_OK);
    }
    CHECK(sinew_player_update(&p, 1.0f / 60.0f, clips, 2, NULL, skel.rest_pose, skel.soa_count, 0,
                              &bufs, blended, skel.soa_count, edges, 8, &report),
          SINEW_STATUS_OK);
    CHECK(sinew_player_get_info(&p, &info), SINEW_STATUS_OK);
    /* 15 frames of fade; the frame it ends on depends on rounding. */
    unsigned want = (f >= 10 && f < 23) ? 2u : (f >= 10 && f < 26) ? info.source_count : 1u;
    if (info.source_count != want || (f >= 41 && f < 50 && !info.inertializing)) {
      fprintf(stderr, "player frame %d: %u sources, inertializing %u\n", f, info.source_count,
              info.inertializing);
      exit(1);
    }
  }
  printf("player_clip %u\nplayer_time %.9g\nplayer_root_z %.9g\n", info.clip, (double)info.time,
         (double)report.root_translation[2]);
  printf("player_sum %.17g\n", sum_floats(&blended[0].translation[0][0], 40 * skel.soa_count));

  sinew_player before = p;
  CHECK(sinew_player_update(&p, NAN, clips, 2, NULL, skel.rest_pose, skel.soa_count, 0, &bufs,
                            blended, skel.soa_count, edges, 8, &report),
        SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_player_update(&p, 0.1f, clips, 1, NULL, skel.rest_pose, skel.soa_count, 0, &bufs,
                            blended, skel.soa_count - 1, edges, 8, &report),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_player_update(&p, 0.1f, clips, 2, NULL, skel.rest_pose, skel.soa_count, 0, &bufs,
                            (sinew_soa_transform *)history, skel.soa_count, edges, 8, &report),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  CHECK(sinew_player_set_speed(&p, INFINITY), SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_player_set_paused(&p, 3), SINEW_STATUS_INVALID_ARGUMENT);
  sinew_transition bad = {-1.0f, SINEW_BLEND_CROSSFADE, SINEW_FADE_LINEAR, 0.0f};
  CHECK(sinew_player_play(&p, clips, 2, 1, SINEW_PLAY_LOOP, &bad), SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_player_play(&p, clips, 2, 5, SINEW_PLAY_LOOP, &bad), SINEW_STATUS_INVALID_ARGUMENT);
  bad.duration = 0.1f;
  CHECK(sinew_player_play(&p, clips, 2, 5, SINEW_PLAY_LOOP, &bad), SINEW_STATUS_OUT_OF_RANGE);
  CHECK(sinew_player_init(NULL, clips, 2, 0, SINEW_PLAY_LOOP), SINEW_STATUS_NULL_PARAMETER);
  if (memcmp(&before, &p, sizeof p) != 0) {
    fprintf(stderr, "a failed player call changed the player\n");
    exit(1);
  }
  p.words[3] = 77; /* a play mode that does not exist */
  CHECK(sinew_player_get_info(&p, &info), SINEW_STATUS_INVALID_DATA);
  free(sources);
  free(history);
  free(scratch_pose);
  free(inertial);
}

/* Blend shapes and shape drivers: a dense and a sparse target on a
 * four-vertex mesh and a corrective on a 90-degree elbow, against values
 * worked out by hand; then each bad input, which must return its status,
 * name the element at fault and leave every output as it was. */
enum { SHAPE_VERTICES = 4 };

static struct {
  float positions[SHAPE_VERTICES][3], normals[SHAPE_VERTICES][3], tangents[SHAPE_VERTICES][4];
} morphed;

static struct {
  sinew_blend_shapes handle;
  alignas(16) uint8_t storage[1024];
  uint32_t bad;
} blend_setup;

static struct {
  sinew_shape_drivers handle;
  alignas(16) uint8_t storage[1024];
  uint32_t bad;
} driver_setup;

/* Never initialised: what a failed set-up must leave as it is. */
static struct {
  sinew_blend_shapes handle;
  alignas(16) uint8_t storage[1024];
} fresh_blend;

static struct {
  sinew_shape_drivers handle;
  alignas(16) uint8_t storage[1024];
} fresh_drivers;

/* The elbow pose: joint 1 bent 90 degrees about z, the other lanes the
 * identity. */
static sinew_soa_transform elbow[1];

static void set_elbow(float angle) {
  memset(elbow, 0, sizeof elbow);
  for (int l = 0; l < 4; l++) {
    elbow[0].rotation[3][l] = 1.0f;
    for (int c = 0; c < 3; c++) elbow[0].scale[c][l] = 1.0f;
  }
  elbow[0].rotation[2][1] = sinf(angle / 2.0f);
  elbow[0].rotation[3][1] = cosf(angle / 2.0f);
}

static void blend_shapes(void) {
  /* Base mesh: vertex v at (v, 0, 0), normal +z, tangent +x with
   * alternating handedness. */
  float base_p[SHAPE_VERTICES][3], base_n[SHAPE_VERTICES][3], base_t[SHAPE_VERTICES][4];
  for (int v = 0; v < SHAPE_VERTICES; v++) {
    float p[3] = {(float)v, 0, 0}, n[3] = {0, 0, 1}, t[4] = {1, 0, 0, v % 2 ? -1.0f : 1.0f};
    memcpy(base_p[v], p, sizeof p);
    memcpy(base_n[v], n, sizeof n);
    memcpy(base_t[v], t, sizeof t);
  }
  /* Target 0, dense: vertex v moves (0, v + 1, 0). Target 1, sparse:
   * vertices 1 and 3 move (0, 0, 2) and (0, 0, -4); vertex 3's normal
   * moves (2, 0, -2). */
  alignas(16) float dense[SHAPE_VERTICES][3] = {{0, 1, 0}, {0, 2, 0}, {0, 3, 0}, {0, 4, 0}};
  uint32_t sparse_idx[2] = {1, 3}, normal_idx[1] = {3};
  float sparse_d[2][3] = {{0, 0, 2}, {0, 0, -4}}, normal_d[1][3] = {{2, 0, -2}};
  sinew_blend_target targets[2];
  memset(targets, 0, sizeof targets);
  targets[0].positions = (sinew_blend_deltas){SINEW_DELTAS_DENSE, SHAPE_VERTICES, dense[0], NULL};
  targets[1].positions = (sinew_blend_deltas){SINEW_DELTAS_SPARSE, 2, sparse_d[0], sparse_idx};
  targets[1].normals = (sinew_blend_deltas){SINEW_DELTAS_SPARSE, 1, normal_d[0], normal_idx};

  size_t size = 0;
  CHECK(sinew_blend_shapes_storage_size(targets, 2, &size), SINEW_STATUS_OK);
  if (size == 0 || size > sizeof blend_setup.storage) {
    fprintf(stderr, "blend shape storage: %zu bytes\n", size);
    exit(1);
  }
  CHECK(sinew_blend_shapes_init(SHAPE_VERTICES, targets, 2, blend_setup.storage, size,
                                &blend_setup.handle, &blend_setup.bad),
        SINEW_STATUS_OK);
  if (blend_setup.bad != SINEW_NO_INDEX || blend_setup.handle.target_count != 2) {
    fprintf(stderr, "blend shape init: bad index %u\n", blend_setup.bad);
    exit(1);
  }
  /* The sparse arrays were copied: scribbling on them changes nothing. */
  sparse_d[0][2] = 1000.0f;
  sparse_idx[0] = 0;

  sinew_skin_mesh base = {SHAPE_VERTICES, base_p[0], base_n[0], base_t[0], NULL, NULL, NULL, NULL};
  sinew_skin_target out = {morphed.positions[0], morphed.normals[0], morphed.tangents[0]};
  float w[2] = {0.5f, 0.25f};
  CHECK(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, 0.0f, 1, &base, &out), SINEW_STATUS_OK);
  /* p = base + 0.5 dense + 0.25 sparse. */
  float want_p[SHAPE_VERTICES][3] = {{0, 0.5f, 0}, {1, 1.0f, 0.5f}, {2, 1.5f, 0}, {3, 2.0f, -1.0f}};
  for (int v = 0; v < SHAPE_VERTICES; v++)
    for (int c = 0; c < 3; c++) expect_near("morphed position", morphed.positions[v][c], want_p[v][c], 1e-6);
  /* Vertex 3's normal: (0, 0, 1) + 0.25 (2, 0, -2) = (0.5, 0, 0.5), unit
   * length (sqrt(1/2), 0, sqrt(1/2)); the others keep +z. */
  expect_near("morphed normal x", morphed.normals[3][0], sqrt(0.5), 1e-6);
  expect_near("morphed normal z", morphed.normals[3][2], sqrt(0.5), 1e-6);
  expect_near("unmoved normal", morphed.normals[2][2], 1.0, 0.0);
  for (int v = 0; v < SHAPE_VERTICES; v++)
    expect_near("tangent handedness", morphed.tangents[v][3], base_t[v][3], 0.0);
  printf("blend_sum %.17g\n", sum_floats(morphed.positions[0], 3 * SHAPE_VERTICES) +
                                  sum_floats(morphed.normals[0], 3 * SHAPE_VERTICES));
  /* Above the threshold 0.3 only the dense target counts. */
  CHECK(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, 0.3f, 0, &base, &out), SINEW_STATUS_OK);
  expect_near("threshold skips the sparse target", morphed.positions[3][2], 0.0, 0.0);
  expect_near("threshold keeps the dense target", morphed.positions[3][1], 2.0, 1e-6);

  /* Bad set-up: each names the target at fault and writes nothing (into a
   * handle and storage never initialised, so every byte is known). */
  memset(&fresh_blend, 0xAB, sizeof fresh_blend);
  sinew_blend_target bad[2];
  float nan_d[SHAPE_VERTICES][3] = {{0, 0, 0}, {0, NAN, 0}, {0, 0, 0}, {0, 0, 0}};
  uint32_t backwards[2] = {3, 1}, past[2] = {1, SHAPE_VERTICES};
  struct {
    sinew_blend_deltas d;
    sinew_status want;
  } cases[] = {
      {{SINEW_DELTAS_DENSE, SHAPE_VERTICES - 1, dense[0], NULL}, SINEW_STATUS_BAD_LENGTH},
      {{SINEW_DELTAS_DENSE, SHAPE_VERTICES, nan_d[0], NULL}, SINEW_STATUS_INVALID_ARGUMENT},
      {{SINEW_DELTAS_DENSE, SHAPE_VERTICES, NULL, NULL}, SINEW_STATUS_NULL_PARAMETER},
      {{SINEW_DELTAS_SPARSE, 2, sparse_d[0], past}, SINEW_STATUS_INVALID_ARGUMENT},
      {{SINEW_DELTAS_SPARSE, 2, sparse_d[0], backwards}, SINEW_STATUS_INVALID_ARGUMENT},
      {{SINEW_DELTAS_SPARSE, 2, sparse_d[0], NULL}, SINEW_STATUS_NULL_PARAMETER},
      {{7, 0, NULL, NULL}, SINEW_STATUS_INVALID_ARGUMENT},
  };
  sinew_blend_shapes before_handle = fresh_blend.handle;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memcpy(bad, targets, sizeof bad);
    bad[1].tangents = cases[i].d;
    blend_setup.bad = 0;
    uint8_t keep[sizeof fresh_blend.storage];
    memcpy(keep, fresh_blend.storage, sizeof keep);
    CHECK(sinew_blend_shapes_init(SHAPE_VERTICES, bad, 2, fresh_blend.storage,
                                  sizeof fresh_blend.storage, &fresh_blend.handle,
                                  &blend_setup.bad),
          cases[i].want);
    if (blend_setup.bad != 1 || memcmp(keep, fresh_blend.storage, sizeof keep) != 0 ||
        memcmp(&before_handle, &fresh_blend.handle, sizeof before_handle) != 0) {
      fprintf(stderr, "bad target case %zu: bad index %u, or it wrote\n", i, blend_setup.bad);
      exit(1);
    }
  }
  CHECK_KEEPS(sinew_blend_shapes_init(SHAPE_VERTICES, targets, 2, fresh_blend.storage, size - 1,
                                      &fresh_blend.handle, NULL),
              SINEW_STATUS_BUFFER_TOO_SMALL, fresh_blend);
  CHECK_KEEPS(sinew_blend_shapes_init(SHAPE_VERTICES, targets, 2, fresh_blend.storage + 4, size,
                                      &fresh_blend.handle, NULL),
              SINEW_STATUS_MISALIGNED, fresh_blend);
  CHECK_KEEPS(sinew_blend_shapes_init(SHAPE_VERTICES, targets, 2, fresh_blend.storage, size, NULL,
                                      NULL),
              SINEW_STATUS_NULL_PARAMETER, fresh_blend);
  CHECK_KEEPS(sinew_blend_shapes_init(SHAPE_VERTICES, NULL, 2, fresh_blend.storage, size,
                                      &fresh_blend.handle, NULL),
              SINEW_STATUS_NULL_PARAMETER, fresh_blend);
  CHECK_KEEPS(sinew_blend_shapes_init(SHAPE_VERTICES, targets, 2, (uint8_t *)dense, size,
                                      &fresh_blend.handle, NULL),
              SINEW_STATUS_OVERLAPPING_BUFFERS, fresh_blend);
  CHECK_KEEPS(sinew_blend_shapes_storage_size(NULL, 2, &size), SINEW_STATUS_NULL_PARAMETER, size);

  /* Bad frames: the outputs stay as they are. */
  float nan_w[2] = {0.5f, NAN};
  CHECK_KEEPS(sinew_blend_shapes_apply(&blend_setup.handle, nan_w, 2, 0.0f, 1, &base, &out),
              SINEW_STATUS_INVALID_ARGUMENT, morphed);
  CHECK_KEEPS(sinew_blend_shapes_apply(&blend_setup.handle, w, 1, 0.0f, 1, &base, &out),
              SINEW_STATUS_BAD_LENGTH, morphed);
  CHECK_KEEPS(sinew_blend_shapes_apply(&blend_setup.handle, NULL, 2, 0.0f, 1, &base, &out),
              SINEW_STATUS_NULL_PARAMETER, morphed);
  CHECK_KEEPS(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, -1.0f, 1, &base, &out),
              SINEW_STATUS_INVALID_ARGUMENT, morphed);
  CHECK_KEEPS(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, NAN, 1, &base, &out),
              SINEW_STATUS_INVALID_ARGUMENT, morphed);
  CHECK_KEEPS(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, 0.0f, 2, &base, &out),
              SINEW_STATUS_INVALID_ARGUMENT, morphed);
  sinew_skin_mesh short_base = base;
  short_base.vertex_count = SHAPE_VERTICES - 1;
  CHECK_KEEPS(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, 0.0f, 1, &short_base, &out),
              SINEW_STATUS_BAD_LENGTH, morphed);
  sinew_skin_mesh no_normals = base;
  no_normals.normals = NULL;
  CHECK_KEEPS(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, 0.0f, 1, &no_normals, &out),
              SINEW_STATUS_NULL_PARAMETER, morphed);
  sinew_skin_target in_place = {base_p[0], NULL, NULL};
  CHECK(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, 0.0f, 1, &base, &in_place),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  sinew_skin_target into_deltas = {dense[0], NULL, NULL};
  CHECK(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, 0.0f, 1, &base, &into_deltas),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  sinew_skin_target into_storage = {(float *)blend_setup.storage, NULL, NULL};
  CHECK(sinew_blend_shapes_apply(&blend_setup.handle, w, 2, 0.0f, 1, &base, &into_storage),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  sinew_blend_shapes forged = blend_setup.handle;
  forged.target_count = 1;
  CHECK_KEEPS(sinew_blend_shapes_apply(&forged, w, 1, 0.0f, 1, &base, &out),
              SINEW_STATUS_INVALID_HANDLE, morphed);
  CHECK_KEEPS(sinew_blend_shapes_apply(NULL, w, 2, 0.0f, 1, &base, &out),
              SINEW_STATUS_NULL_PARAMETER, morphed);
}

static void shape_drivers(void) {
  /* Shape 0: the elbow corrective, full at 120 degrees of bend about the
   * hinge (z). Shape 1: animated. Shape 2: shape 0 times shape 1. */
  const float pi = 3.14159265358979f;
  sinew_corrective elbow_fix = {0, 1, {0, 0, 0, 1}, SINEW_SHAPE_ANGLE_TWIST, {0, 0, 1}, 0.0f,
                                2.0f * pi / 3.0f, SINEW_SHAPE_RAMP_LINEAR};
  uint32_t inputs[2] = {0, 1};
  sinew_combination combo = {2, inputs, 2};
  size_t size = 0;
  CHECK(sinew_shape_drivers_storage_size(1, &combo, 1, &size), SINEW_STATUS_OK);
  if (size == 0 || size > sizeof driver_setup.storage) {
    fprintf(stderr, "driver storage: %zu bytes\n", size);
    exit(1);
  }
  CHECK(sinew_shape_drivers_init(3, 2, &elbow_fix, 1, &combo, 1, driver_setup.storage, size,
                                 &driver_setup.handle, &driver_setup.bad),
        SINEW_STATUS_OK);
  inputs[0] = 2; /* copied: the handle does not see this */
  set_elbow(pi / 2.0f);
  float w[3] = {0.0f, 0.5f, 0.0f};
  CHECK(sinew_shape_drivers_evaluate(&driver_setup.handle, elbow, 1, w, 3), SINEW_STATUS_OK);
  /* 90 of 120 degrees: 0.75; the combination 0.75 * 0.5. */
  expect_near("elbow corrective", w[0], 0.75, 1e-5);
  expect_near("animated weight", w[1], 0.5, 0.0);
  expect_near("combination", w[2], 0.375, 1e-5);
  printf("elbow_weight %.9g\n", (double)w[0]);
  inputs[0] = 0;

  /* Smoothstep of t = 0.75: 0.75^2 (3 - 1.5) = 0.84375. */
  sinew_corrective smooth = elbow_fix;
  smooth.ramp = SINEW_SHAPE_RAMP_SMOOTHSTEP;
  sinew_shape_drivers smooth_handle;
  alignas(16) uint8_t smooth_storage[512];
  CHECK(sinew_shape_drivers_init(3, 2, &smooth, 1, NULL, 0, smooth_storage, sizeof smooth_storage,
                                 &smooth_handle, NULL),
        SINEW_STATUS_OK);
  CHECK(sinew_shape_drivers_evaluate(&smooth_handle, elbow, 1, w, 3), SINEW_STATUS_OK);
  expect_near("smoothstep corrective", w[0], 0.84375, 1e-5);

  /* Bad set-up: the driver at fault is named (correctives first, then
   * combinations) and nothing is written (into a fresh handle and storage). */
  memset(&fresh_drivers, 0xAB, sizeof fresh_drivers);
  struct {
    sinew_corrective c;
    sinew_status want;
  } bad_correctives[] = {
      {{0, 1, {0, 0, 0, 1}, SINEW_SHAPE_ANGLE_TWIST, {0, 0, 1}, 0.5f, 0.5f, SINEW_SHAPE_RAMP_LINEAR},
       SINEW_STATUS_INVALID_ARGUMENT}, /* theta0 == theta1 */
      {{0, 2, {0, 0, 0, 1}, SINEW_SHAPE_ANGLE_TWIST, {0, 0, 1}, 0.0f, 1.0f, SINEW_SHAPE_RAMP_LINEAR},
       SINEW_STATUS_OUT_OF_RANGE}, /* joint past the skeleton */
      {{3, 1, {0, 0, 0, 1}, SINEW_SHAPE_ANGLE_TWIST, {0, 0, 1}, 0.0f, 1.0f, SINEW_SHAPE_RAMP_LINEAR},
       SINEW_STATUS_INVALID_ARGUMENT}, /* shape past the weights */
      {{0, 1, {0, 0, 0, 0}, SINEW_SHAPE_ANGLE_TWIST, {0, 0, 1}, 0.0f, 1.0f, SINEW_SHAPE_RAMP_LINEAR},
       SINEW_STATUS_INVALID_ARGUMENT}, /* zero reference */
      {{0, 1, {0, 0, 0, 1}, SINEW_SHAPE_ANGLE_SWING, {0, 0, 2}, 0.0f, 1.0f, SINEW_SHAPE_RAMP_LINEAR},
       SINEW_STATUS_INVALID_ARGUMENT}, /* axis not unit */
      {{0, 1, {0, 0, 0, 1}, 9, {0, 0, 1}, 0.0f, 1.0f, SINEW_SHAPE_RAMP_LINEAR},
       SINEW_STATUS_INVALID_ARGUMENT}, /* unknown angle */
      {{0, 1, {0, 0, 0, 1}, SINEW_SHAPE_ANGLE_TOTAL, {0, 0, 0}, 0.0f, NAN, 5},
       SINEW_STATUS_INVALID_ARGUMENT}, /* unknown ramp */
      {{0, 1, {0, 0, 0, 1}, SINEW_SHAPE_ANGLE_TOTAL, {0, 0, 0}, 0.0f, NAN, SINEW_SHAPE_RAMP_LINEAR},
       SINEW_STATUS_INVALID_ARGUMENT}, /* NaN angle */
  };
  sinew_corrective pair[2] = {{1, 0, {0, 0, 0, 1}, SINEW_SHAPE_ANGLE_TOTAL, {0, 0, 0}, 0.0f, 1.0f,
                               SINEW_SHAPE_RAMP_LINEAR}};
  for (size_t i = 0; i < sizeof bad_correctives / sizeof bad_correctives[0]; i++) {
    pair[1] = bad_correctives[i].c;
    driver_setup.bad = 0;
    uint8_t keep[sizeof fresh_drivers.storage];
    memcpy(keep, fresh_drivers.storage, sizeof keep);
    sinew_shape_drivers before = fresh_drivers.handle;
    CHECK(sinew_shape_drivers_init(3, 2, pair, 2, NULL, 0, fresh_drivers.storage,
                                   sizeof fresh_drivers.storage, &fresh_drivers.handle,
                                   &driver_setup.bad),
          bad_correctives[i].want);
    if (driver_setup.bad != 1 || memcmp(keep, fresh_drivers.storage, sizeof keep) != 0 ||
        memcmp(&before, &fresh_drivers.handle, sizeof before) != 0) {
      fprintf(stderr, "bad corrective %zu: bad index %u, or it wrote\n", i, driver_setup.bad);
      exit(1);
    }
  }
  /* Combinations: one reading a shape a later driver writes, one with no
   * inputs, one writing the corrective's shape: driver 1 (the first
   * combination) each time. */
  uint32_t reads_later[1] = {1}, two[1] = {2};
  sinew_combination bad_combos[][2] = {
      {{2, reads_later, 1}, {1, inputs, 1}},
      {{2, inputs, 0}, {1, inputs, 1}},
      {{0, two, 1}, {1, inputs, 1}},
  };
  for (size_t i = 0; i < sizeof bad_combos / sizeof bad_combos[0]; i++) {
    driver_setup.bad = 0;
    CHECK_KEEPS(sinew_shape_drivers_init(3, 2, &elbow_fix, 1, bad_combos[i], 2,
                                         fresh_drivers.storage, sizeof fresh_drivers.storage,
                                         &fresh_drivers.handle, NULL),
                SINEW_STATUS_INVALID_ARGUMENT, fresh_drivers);
    CHECK(sinew_shape_drivers_init(3, 2, &elbow_fix, 1, bad_combos[i], 2, fresh_drivers.storage,
                                   sizeof fresh_drivers.storage, &smooth_handle, &driver_setup.bad),
          SINEW_STATUS_INVALID_ARGUMENT);
    if (driver_setup.bad != 1) {
      fprintf(stderr, "bad combination %zu: bad index %u\n", i, driver_setup.bad);
      exit(1);
    }
  }
  CHECK_KEEPS(sinew_shape_drivers_init(3, 2, &elbow_fix, 1, &combo, 1, fresh_drivers.storage,
                                       size - 1, &fresh_drivers.handle, NULL),
              SINEW_STATUS_BUFFER_TOO_SMALL, fresh_drivers);
  CHECK_KEEPS(sinew_shape_drivers_init(3, 2, NULL, 1, &combo, 1, fresh_drivers.storage, size,
                                       &fresh_drivers.handle, NULL),
              SINEW_STATUS_NULL_PARAMETER, fresh_drivers);

  /* Bad frames: the weights stay as they are. */
  float keep_w[3] = {0.1f, 0.2f, 0.3f};
  memcpy(w, keep_w, sizeof w);
  CHECK_KEEPS(sinew_shape_drivers_evaluate(&driver_setup.handle, elbow, 1, w, 2),
              SINEW_STATUS_BAD_LENGTH, w);
  CHECK_KEEPS(sinew_shape_drivers_evaluate(&driver_setup.handle, elbow, 0, w, 3),
              SINEW_STATUS_BAD_LENGTH, w);
  CHECK_KEEPS(sinew_shape_drivers_evaluate(&driver_setup.handle, NULL, 1, w, 3),
              SINEW_STATUS_NULL_PARAMETER, w);
  CHECK_KEEPS(sinew_shape_drivers_evaluate(&driver_setup.handle, elbow, 1, NULL, 3),
              SINEW_STATUS_NULL_PARAMETER, w);
  CHECK(sinew_shape_drivers_evaluate(&driver_setup.handle, elbow, 1,
                                     (float *)driver_setup.storage, 3),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  elbow[0].rotation[0][1] = NAN;
  CHECK_KEEPS(sinew_shape_drivers_evaluate(&driver_setup.handle, elbow, 1, w, 3),
              SINEW_STATUS_INVALID_ARGUMENT, w);
  sinew_shape_drivers forged = driver_setup.handle;
  forged.storage += 16;
  set_elbow(pi / 2.0f);
  CHECK_KEEPS(sinew_shape_drivers_evaluate(&forged, elbow, 1, w, 3), SINEW_STATUS_INVALID_HANDLE,
              w);
}

static void rbf_drivers(void) {
  /* One driver on the elbow (joint 1): at rest output 0 is 1, bent by 90
   * degrees output 1 is 1. */
  const float pi = 3.14159265358979f;
  const float h = sinf(pi / 4.0f);
  float examples[2][4] = {{0, 0, 0, 1}, {0, 0, h, cosf(pi / 4.0f)}};
  float targets[4] = {1, 0, 0, 1};
  sinew_rbf_fit fit = {SINEW_RBF_GAUSSIAN, 1.0f, 0.0f, &examples[0][0], 2, targets, 2};
  size_t scratch_len = 0, weight_count = 0;
  CHECK(sinew_rbf_solve_sizes(&fit, 1, &scratch_len, &weight_count), SINEW_STATUS_OK);
  if (scratch_len != 2 * (2 + 2) + 2 || weight_count != 4) {
    fprintf(stderr, "rbf sizes: %zu doubles, %zu weights\n", scratch_len, weight_count);
    exit(1);
  }
  double scratch[16];
  float weights[4];
  uint32_t bad = 0;
  CHECK(sinew_rbf_solve(&fit, 1, scratch, scratch_len, weights, 4, &bad), SINEW_STATUS_OK);
  if (bad != SINEW_NO_INDEX) {
    fprintf(stderr, "rbf solve: bad index %u on success\n", bad);
    exit(1);
  }

  sinew_rbf_driver driver = {1, SINEW_RBF_GAUSSIAN, 1.0f, 0, &examples[0][0], 2, weights, 2};
  size_t size = 0;
  CHECK(sinew_rbf_drivers_storage_size(&driver, 1, &size), SINEW_STATUS_OK);
  alignas(16) static uint8_t storage[512];
  if (size == 0 || size > sizeof storage) {
    fprintf(stderr, "rbf storage: %zu bytes\n", size);
    exit(1);
  }
  sinew_rbf_drivers handle;
  CHECK(sinew_rbf_drivers_init(2, &driver, 1, storage, size, &handle, &bad), SINEW_STATUS_OK);
  examples[1][3] = 7.0f; /* copied: the handle does not see this */
  float out[2];
  set_elbow(0.0f);
  CHECK(sinew_rbf_drivers_evaluate(&handle, elbow, 1, out, 2), SINEW_STATUS_OK);
  expect_near("rbf rest output 0", out[0], 1.0, 1e-5);
  expect_near("rbf rest output 1", out[1], 0.0, 1e-5);
  set_elbow(pi / 2.0f);
  CHECK(sinew_rbf_drivers_evaluate(&handle, elbow, 1, out, 2), SINEW_STATUS_OK);
  expect_near("rbf bent output 0", out[0], 0.0, 1e-5);
  expect_near("rbf bent output 1", out[1], 1.0, 1e-5);
  examples[1][3] = cosf(pi / 4.0f);

  /* A singular fit (a duplicate example, lambda 0) is named and writes no
   * weights, even those of the good fit before it. */
  float dup[2][4] = {{0, 0, 0, 1}, {0, 0, 0, 1}};
  sinew_rbf_fit fits[2] = {fit, {SINEW_RBF_GAUSSIAN, 1.0f, 0.0f, &dup[0][0], 2, targets, 2}};
  float both[8] = {5, 5, 5, 5, 5, 5, 5, 5};
  CHECK(sinew_rbf_solve_sizes(fits, 2, &scratch_len, &weight_count), SINEW_STATUS_OK);
  CHECK_KEEPS(sinew_rbf_solve(fits, 2, scratch, scratch_len, both, 8, &bad),
              SINEW_STATUS_INVALID_ARGUMENT, both);
  if (bad != 1) {
    fprintf(stderr, "singular rbf: bad index %u\n", bad);
    exit(1);
  }
  /* With lambda > 0 it solves. */
  fits[1].lambda = 0.1f;
  CHECK(sinew_rbf_solve(fits, 2, scratch, scratch_len, both, 8, &bad), SINEW_STATUS_OK);
  CHECK_KEEPS(sinew_rbf_solve(fits, 2, scratch, scratch_len - 1, both, 8, NULL),
              SINEW_STATUS_BUFFER_TOO_SMALL, both);
  CHECK_KEEPS(sinew_rbf_solve(fits, 2, scratch, scratch_len, both, 7, NULL),
              SINEW_STATUS_BAD_LENGTH, both);
  fits[1].sigma = -1.0f;
  CHECK_KEEPS(sinew_rbf_solve(fits, 2, scratch, scratch_len, both, 8, &bad),
              SINEW_STATUS_INVALID_ARGUMENT, both);
  if (bad != 1) {
    fprintf(stderr, "negative sigma: bad index %u\n", bad);
    exit(1);
  }

  /* Bad set-up: named, nothing written. */
  static struct {
    alignas(16) uint8_t storage[512];
    sinew_rbf_drivers handle;
  } fresh;
  memset(&fresh, 0xAB, sizeof fresh);
  sinew_rbf_driver bad_drivers[][2] = {
      {driver, {2, SINEW_RBF_GAUSSIAN, 1.0f, 0, &examples[0][0], 2, weights, 2}},
      {driver, {1, 7, 1.0f, 0, &examples[0][0], 2, weights, 2}},
      {driver, {1, SINEW_RBF_GAUSSIAN, 0.0f, 0, &examples[0][0], 2, weights, 2}},
      {driver, {1, SINEW_RBF_GAUSSIAN, 1.0f, 2, &examples[0][0], 2, weights, 2}},
      {driver, {1, SINEW_RBF_GAUSSIAN, 1.0f, 0, &targets[0], 1, weights, 2}},
  };
  sinew_status want[] = {SINEW_STATUS_OUT_OF_RANGE, SINEW_STATUS_INVALID_ARGUMENT,
                         SINEW_STATUS_INVALID_ARGUMENT, SINEW_STATUS_INVALID_ARGUMENT,
                         SINEW_STATUS_INVALID_ARGUMENT};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    bad = 0;
    CHECK_KEEPS(sinew_rbf_drivers_init(2, bad_drivers[i], 2, fresh.storage, sizeof fresh.storage,
                                       &fresh.handle, &bad),
                want[i], fresh);
    if (bad != 1) {
      fprintf(stderr, "bad rbf driver %zu: bad index %u\n", i, bad);
      exit(1);
    }
  }
  CHECK_KEEPS(sinew_rbf_drivers_init(2, &driver, 1, fresh.storage, size - 1, &fresh.handle, NULL),
              SINEW_STATUS_BUFFER_TOO_SMALL, fresh);

  /* Bad frames: the outputs stay as they are. */
  CHECK_KEEPS(sinew_rbf_drivers_evaluate(&handle, elbow, 1, out, 1), SINEW_STATUS_BAD_LENGTH, out);
  CHECK_KEEPS(sinew_rbf_drivers_evaluate(&handle, elbow, 2, out, 2), SINEW_STATUS_BAD_LENGTH, out);
  CHECK_KEEPS(sinew_rbf_drivers_evaluate(&handle, NULL, 1, out, 2), SINEW_STATUS_NULL_PARAMETER,
              out);
  CHECK(sinew_rbf_drivers_evaluate(&handle, elbow, 1, (float *)storage, 2),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  elbow[0].rotation[3][1] = NAN;
  CHECK_KEEPS(sinew_rbf_drivers_evaluate(&handle, elbow, 1, out, 2), SINEW_STATUS_INVALID_ARGUMENT,
              out);
  set_elbow(0.0f);
  sinew_rbf_drivers forged = handle;
  forged.output_count = 3;
  float three[3] = {0, 0, 0};
  CHECK_KEEPS(sinew_rbf_drivers_evaluate(&forged, elbow, 1, three, 3), SINEW_STATUS_INVALID_HANDLE,
              three);
}

#define MUSH_SIDE 4
#define MUSH_VERTICES (MUSH_SIDE * MUSH_SIDE)
#define MUSH_INDICES ((MUSH_SIDE - 1) * (MUSH_SIDE - 1) * 6)

static void delta_mush(void) {
  /* A 4x4 grid, bumped in z so that smoothing changes it. */
  static float rest[MUSH_VERTICES][3];
  static uint32_t tris[MUSH_INDICES];
  size_t k = 0;
  for (int y = 0; y < MUSH_SIDE; y++) {
    for (int x = 0; x < MUSH_SIDE; x++) {
      float *p = rest[y * MUSH_SIDE + x];
      p[0] = (float)x;
      p[1] = (float)y;
      p[2] = 0.3f * sinf((float)(x * 3 + y * 5));
    }
  }
  for (uint32_t y = 0; y + 1 < MUSH_SIDE; y++) {
    for (uint32_t x = 0; x + 1 < MUSH_SIDE; x++) {
      uint32_t a = y * MUSH_SIDE + x, b = a + 1, c = a + MUSH_SIDE, d = c + 1;
      uint32_t t[6] = {a, b, d, a, d, c};
      for (int i = 0; i < 6; i++) tris[k++] = t[i];
    }
  }
  sinew_mush_counts n;
  CHECK(sinew_mush_sizes(MUSH_VERTICES, MUSH_INDICES, &n), SINEW_STATUS_OK);
  if (n.offsets != MUSH_VERTICES + 1 || n.neighbour_capacity != 2 * MUSH_INDICES ||
      n.scratch != 2 * MUSH_VERTICES || n.deltas != MUSH_VERTICES || n.storage_size > 256) {
    fprintf(stderr, "mush sizes: %zu %zu %zu %zu %zu\n", n.offsets, n.neighbour_capacity,
            n.scratch, n.deltas, n.storage_size);
    exit(1);
  }
  static struct {
    uint32_t offsets[MUSH_VERTICES + 1];
    uint32_t neighbours[2 * MUSH_INDICES];
    float deltas[MUSH_VERTICES][4];
    size_t neighbour_count;
  } built;
  static float scratch[2 * MUSH_VERTICES][4];
  sinew_mush_settings settings = {4, 0.5f};
  CHECK(sinew_mush_build(tris, MUSH_INDICES, &rest[0][0], MUSH_VERTICES, settings, built.offsets,
                         n.offsets, built.neighbours, n.neighbour_capacity, &built.neighbour_count,
                         &scratch[0][0], n.scratch, &built.deltas[0][0], n.deltas),
        SINEW_STATUS_OK);
  /* Interior vertex 5 of the grid has 6 neighbours. */
  if (built.offsets[6] - built.offsets[5] != 6 || built.neighbour_count > n.neighbour_capacity) {
    fprintf(stderr, "mush adjacency: %u neighbours of vertex 5\n",
            built.offsets[6] - built.offsets[5]);
    exit(1);
  }
  alignas(16) static uint8_t storage[256];
  sinew_delta_mush mush;
  CHECK(sinew_mush_init(tris, MUSH_INDICES, built.offsets, MUSH_VERTICES, built.neighbours,
                        built.neighbour_count, &built.deltas[0][0], settings, storage,
                        n.storage_size, &mush),
        SINEW_STATUS_OK);
  /* The rest pose comes back. */
  static float out[MUSH_VERTICES][3];
  CHECK(sinew_mush_deform(&mush, &rest[0][0], MUSH_VERTICES, &scratch[0][0], n.scratch,
                          &out[0][0], MUSH_VERTICES),
        SINEW_STATUS_OK);
  double worst = 0.0;
  for (int v = 0; v < MUSH_VERTICES; v++)
    for (int c = 0; c < 3; c++) worst = fmax(worst, fabs(out[v][c] - rest[v][c]));
  expect_near("mushed rest pose", worst, 0.0, 1e-5);
  printf("mush_rest_error %.9g\n", worst);

  /* Bad builds write nothing. */
  static struct {
    uint32_t offsets[MUSH_VERTICES + 1];
    uint32_t neighbours[2 * MUSH_INDICES];
    float deltas[MUSH_VERTICES][4];
    size_t neighbour_count;
  } fresh;
  memset(&fresh, 0xAB, sizeof fresh);
#define BUILD(tris_, count_, rest_, settings_, nb_len_)                                        \
  sinew_mush_build(tris_, count_, rest_, MUSH_VERTICES, settings_, fresh.offsets, n.offsets,   \
                   fresh.neighbours, nb_len_, &fresh.neighbour_count, &scratch[0][0],          \
                   n.scratch, &fresh.deltas[0][0], n.deltas)
  tris[7] = MUSH_VERTICES;
  CHECK_KEEPS(BUILD(tris, MUSH_INDICES, &rest[0][0], settings, n.neighbour_capacity),
              SINEW_STATUS_INVALID_DATA, fresh);
  tris[7] = 1;
  CHECK_KEEPS(BUILD(tris, MUSH_INDICES - 1, &rest[0][0], settings, n.neighbour_capacity),
              SINEW_STATUS_INVALID_DATA, fresh);
  sinew_mush_settings zero_step = {4, 0.0f};
  CHECK_KEEPS(BUILD(tris, MUSH_INDICES, &rest[0][0], zero_step, n.neighbour_capacity),
              SINEW_STATUS_INVALID_ARGUMENT, fresh);
  CHECK_KEEPS(BUILD(tris, MUSH_INDICES, &rest[0][0], settings, n.neighbour_capacity - 1),
              SINEW_STATUS_BUFFER_TOO_SMALL, fresh);
  CHECK_KEEPS(BUILD(tris, MUSH_INDICES, NULL, settings, n.neighbour_capacity),
              SINEW_STATUS_NULL_PARAMETER, fresh);
  rest[3][1] = NAN;
  CHECK_KEEPS(BUILD(tris, MUSH_INDICES, &rest[0][0], settings, n.neighbour_capacity),
              SINEW_STATUS_INVALID_ARGUMENT, fresh);
  rest[3][1] = 0.0f;
#undef BUILD

  /* Bad set-up writes no handle; bad frames write no output. */
  sinew_delta_mush spare;
  memset(&spare, 0xAB, sizeof spare);
  CHECK_KEEPS(sinew_mush_init(tris, MUSH_INDICES, built.offsets, MUSH_VERTICES, built.neighbours,
                              built.neighbour_count, &built.deltas[0][0], zero_step, storage + 128,
                              n.storage_size, &spare),
              SINEW_STATUS_INVALID_ARGUMENT, spare);
  CHECK_KEEPS(sinew_mush_init(tris, MUSH_INDICES, built.offsets, MUSH_VERTICES, built.neighbours,
                              built.neighbour_count - 1, &built.deltas[0][0], settings,
                              storage + 128, n.storage_size, &spare),
              SINEW_STATUS_INVALID_DATA, spare);
  CHECK_KEEPS(sinew_mush_init(tris, MUSH_INDICES, built.offsets, MUSH_VERTICES, built.neighbours,
                              built.neighbour_count, &built.deltas[0][0], settings, storage + 128,
                              n.storage_size - 1, &spare),
              SINEW_STATUS_BUFFER_TOO_SMALL, spare);
  memset(out, 0, sizeof out);
  CHECK_KEEPS(sinew_mush_deform(&mush, &rest[0][0], MUSH_VERTICES, &scratch[0][0], n.scratch,
                                &out[0][0], MUSH_VERTICES - 1),
              SINEW_STATUS_BAD_LENGTH, out);
  CHECK_KEEPS(sinew_mush_deform(&mush, &rest[0][0], MUSH_VERTICES, &scratch[0][0], n.scratch - 1,
                                &out[0][0], MUSH_VERTICES),
              SINEW_STATUS_BAD_LENGTH, out);
  CHECK_KEEPS(sinew_mush_deform(&mush, &rest[0][0], MUSH_VERTICES, &scratch[0][0], n.scratch,
                                &built.deltas[0][0], MUSH_VERTICES),
              SINEW_STATUS_OVERLAPPING_BUFFERS, built);
  CHECK_KEEPS(sinew_mush_deform(&mush, &out[0][0], MUSH_VERTICES, &scratch[0][0], n.scratch,
                                &out[0][0], MUSH_VERTICES),
              SINEW_STATUS_OVERLAPPING_BUFFERS, out);
  sinew_delta_mush forged = mush;
  forged.vertex_count = MUSH_VERTICES - 1;
  CHECK_KEEPS(sinew_mush_deform(&forged, &rest[0][0], MUSH_VERTICES - 1, &scratch[0][0],
                                n.scratch - 2, &out[0][0], MUSH_VERTICES - 1),
              SINEW_STATUS_INVALID_HANDLE, out);
}

/* A motion-matching database written by the Rust side: describe it, search
 * near frame 123 (pruned and brute force agree bit for bit), cost a frame,
 * keep the current frame under a bound, normalize raw features, locate
 * frames in their clips; then every bad input, each leaving the outputs
 * alone. */
static alignas(16) uint8_t mm_bytes[1 << 18];
static void mm_database_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) exit(1);
  size_t len = fread(mm_bytes, 1, sizeof mm_bytes, f);
  fclose(f);
  sinew_mm_database db, untouched;
  memset(&untouched, 0x5a, sizeof untouched);
  db = untouched;
  CHECK(sinew_mm_database_load(mm_bytes, len, &db), SINEW_STATUS_OK);
  sinew_mm_info info;
  CHECK(sinew_mm_database_info(&db, &info), SINEW_STATUS_OK);
  if (info.feature_count != db.feature_count || info.frame_count != db.frame_count ||
      info.feature_count > 256) {
    fprintf(stderr, "mm info disagrees with the handle\n");
    exit(1);
  }
  printf("mm_features %u\nmm_frames %u\nmm_ranges %u\nmm_groups %u\nmm_rate %.9g\n",
         info.feature_count, info.frame_count, info.range_count, info.group_count,
         (double)info.sample_rate);
  uint32_t width = 0;
  for (uint32_t g = 0; g < info.group_count; g++) {
    sinew_mm_group group;
    CHECK(sinew_mm_database_group(&db, g, &group), SINEW_STATUS_OK);
    if (group.first != width || group.kind > SINEW_MM_FEATURE_TRAJECTORY_DIRECTION) exit(1);
    width += group.width;
  }
  if (width != info.feature_count) exit(1);

  const size_t n = db.feature_count;
  float q[256] = {0}, raw[256] = {0}, norm[256] = {0};
  CHECK(sinew_mm_frame_features(&db, 123, q, n), SINEW_STATUS_OK);
  for (size_t i = 0; i < n; i++) q[i] += 0.01f * (float)(i % 3) - 0.01f;
  uint32_t frame = 0, brute_frame = 0;
  float cost = 0.0f, brute_cost = 0.0f, again = 0.0f;
  CHECK(sinew_mm_search(&db, q, n, INFINITY, &frame, &cost), SINEW_STATUS_OK);
  CHECK(sinew_mm_search_brute(&db, q, n, INFINITY, &brute_frame, &brute_cost), SINEW_STATUS_OK);
  CHECK(sinew_mm_cost(&db, q, n, frame, &again), SINEW_STATUS_OK);
  if (frame != brute_frame || memcmp(&cost, &brute_cost, sizeof cost) != 0 ||
      memcmp(&cost, &again, sizeof cost) != 0) {
    fprintf(stderr, "mm searches disagree: %u %.9g, brute %u %.9g, cost %.9g\n", frame,
            (double)cost, brute_frame, (double)brute_cost, (double)again);
    exit(1);
  }
  printf("mm_frame %u\nmm_cost %.9g\n", frame, (double)cost);
  float cost_40 = 0.0f;
  CHECK(sinew_mm_cost(&db, q, n, 40, &cost_40), SINEW_STATUS_OK);
  printf("mm_cost_40 %.9g\n", (double)cost_40);
  /* Nothing costs less than the best: keep playing (NOT_FOUND, nothing written). */
  uint32_t kept = 77;
  float kept_cost = 7.0f;
  CHECK_KEEPS(sinew_mm_search(&db, q, n, cost, &kept, &kept_cost), SINEW_STATUS_NOT_FOUND, kept);
  CHECK_KEEPS(sinew_mm_search_brute(&db, q, n, cost, &kept, &kept_cost), SINEW_STATUS_NOT_FOUND,
              kept_cost);
  CHECK(sinew_mm_search(&db, q, n, cost_40, &kept, &kept_cost), SINEW_STATUS_OK);
  if (kept != frame) exit(1);

  for (size_t i = 0; i < n; i++) raw[i] = 0.1f * (float)i - 0.5f;
  CHECK(sinew_mm_normalize(&db, 0, raw, n, norm, n), SINEW_STATUS_OK);
  printf("mm_normalized_sum %.17g\n", sum_floats(norm, n));
  CHECK(sinew_mm_normalize(&db, 1, raw, 2, norm, 2), SINEW_STATUS_OK);
  printf("mm_normalized_1 %.9g\n", (double)norm[1]);

  uint32_t range = 0, local = 0, clip = 0, mirrored = 0;
  CHECK(sinew_mm_locate(&db, frame, &range, &local, &clip, &mirrored), SINEW_STATUS_OK);
  printf("mm_range %u\nmm_local %u\nmm_clip %u\nmm_mirrored %u\n", range, local, clip, mirrored);
  CHECK(sinew_mm_locate(&db, db.frame_count - 1, &range, &local, &clip, &mirrored),
        SINEW_STATUS_OK);
  printf("mm_last_range %u\nmm_last_local %u\nmm_last_clip %u\nmm_last_mirrored %u\n", range,
         local, clip, mirrored);

  /* Loading: NULL, empty, misaligned, foreign and truncated bytes. */
  sinew_mm_database bad = untouched;
  CHECK_KEEPS(sinew_mm_database_load(NULL, len, &bad), SINEW_STATUS_NULL_PARAMETER, bad);
  CHECK_KEEPS(sinew_mm_database_load(mm_bytes, 0, &bad), SINEW_STATUS_NULL_PARAMETER, bad);
  CHECK(sinew_mm_database_load(mm_bytes, len, NULL), SINEW_STATUS_NULL_PARAMETER);
  memcpy(scratch + 4, mm_bytes, len);
  CHECK_KEEPS(sinew_mm_database_load(scratch + 4, len, &bad), SINEW_STATUS_MISALIGNED, bad);
  CHECK_KEEPS(sinew_mm_database_load(skeleton_bytes, sizeof skeleton_bytes, &bad),
              SINEW_STATUS_INVALID_DATA, bad);
  CHECK_KEEPS(sinew_mm_database_load(mm_bytes, len - 16, &bad), SINEW_STATUS_INVALID_DATA, bad);
  memcpy(scratch, mm_bytes, len);
  scratch[8] ^= 0x01; /* the version */
  CHECK_KEEPS(sinew_mm_database_load(scratch, len, &bad), SINEW_STATUS_UNSUPPORTED_VERSION, bad);
  scratch[8] ^= 0x01;
  scratch[len - 1] ^= 0x01; /* a bound of the last large box */
  CHECK_KEEPS(sinew_mm_database_load(scratch, len, &bad), SINEW_STATUS_INVALID_DATA, bad);

  /* Handles: zeroed, edited, NULL. */
  memset(&bad, 0, sizeof bad);
  CHECK_KEEPS(sinew_mm_search(&bad, q, n, INFINITY, &kept, &kept_cost),
              SINEW_STATUS_INVALID_HANDLE, kept);
  bad = db;
  bad.feature_count -= 1;
  CHECK_KEEPS(sinew_mm_search_brute(&bad, q, n - 1, INFINITY, &kept, &kept_cost),
              SINEW_STATUS_INVALID_HANDLE, kept);
  CHECK_KEEPS(sinew_mm_database_info(&bad, &info), SINEW_STATUS_INVALID_HANDLE, info);
  CHECK(sinew_mm_database_info(NULL, &info), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_mm_database_info(&db, NULL), SINEW_STATUS_NULL_PARAMETER);

  /* Searches: lengths, NaN, a NaN bound, NULL and overlapping outputs. */
  CHECK_KEEPS(sinew_mm_search(&db, q, n - 1, INFINITY, &kept, &kept_cost),
              SINEW_STATUS_BAD_LENGTH, kept);
  CHECK_KEEPS(sinew_mm_search(&db, NULL, n, INFINITY, &kept, &kept_cost),
              SINEW_STATUS_NULL_PARAMETER, kept);
  CHECK(sinew_mm_search(&db, q, n, INFINITY, NULL, &kept_cost), SINEW_STATUS_NULL_PARAMETER);
  CHECK(sinew_mm_search_brute(&db, q, n, INFINITY, &kept, NULL), SINEW_STATUS_NULL_PARAMETER);
  CHECK_KEEPS(sinew_mm_search(&db, q, n, NAN, &kept, &kept_cost), SINEW_STATUS_INVALID_ARGUMENT,
              kept);
  float saved = q[2];
  q[2] = NAN;
  CHECK_KEEPS(sinew_mm_search_brute(&db, q, n, INFINITY, &kept, &kept_cost),
              SINEW_STATUS_INVALID_ARGUMENT, kept_cost);
  q[2] = INFINITY;
  CHECK_KEEPS(sinew_mm_cost(&db, q, n, 0, &kept_cost), SINEW_STATUS_INVALID_ARGUMENT, kept_cost);
  q[2] = saved;
  CHECK_KEEPS(sinew_mm_search(&db, q, n, INFINITY, &kept, &q[n - 1]),
              SINEW_STATUS_OVERLAPPING_BUFFERS, kept);
  CHECK_KEEPS(sinew_mm_search(&db, q, n, INFINITY, (uint32_t *)(void *)&kept_cost, &kept_cost),
              SINEW_STATUS_OVERLAPPING_BUFFERS, kept_cost);
  CHECK_KEEPS(sinew_mm_search(&db, q, n, INFINITY, &kept, (float *)(void *)(mm_bytes + 64)),
              SINEW_STATUS_OVERLAPPING_BUFFERS, kept);

  /* Cost, frame features, normalize, locate, group: out of range and lengths. */
  CHECK_KEEPS(sinew_mm_cost(&db, q, n, db.frame_count, &kept_cost), SINEW_STATUS_OUT_OF_RANGE,
              kept_cost);
  CHECK_KEEPS(sinew_mm_cost(&db, q, n + 1, 0, &kept_cost), SINEW_STATUS_BAD_LENGTH, kept_cost);
  CHECK_KEEPS(sinew_mm_frame_features(&db, db.frame_count, norm, n), SINEW_STATUS_OUT_OF_RANGE,
              norm);
  CHECK_KEEPS(sinew_mm_frame_features(&db, 0, norm, n - 1), SINEW_STATUS_BAD_LENGTH, norm);
  CHECK_KEEPS(sinew_mm_frame_features(&db, 0, (float *)(void *)(mm_bytes + 64), n),
              SINEW_STATUS_OVERLAPPING_BUFFERS, norm);
  CHECK_KEEPS(sinew_mm_normalize(&db, 1, raw, n, norm, n), SINEW_STATUS_BAD_LENGTH, norm);
  CHECK_KEEPS(sinew_mm_normalize(&db, 0, raw, n, norm, n - 1), SINEW_STATUS_BAD_LENGTH, norm);
  raw[0] = NAN;
  CHECK_KEEPS(sinew_mm_normalize(&db, 0, raw, n, norm, n), SINEW_STATUS_INVALID_ARGUMENT, norm);
  CHECK_KEEPS(sinew_mm_normalize(&db, 0, raw, 4, raw + 2, 4), SINEW_STATUS_OVERLAPPING_BUFFERS,
              raw);
  CHECK_KEEPS(sinew_mm_locate(&db, db.frame_count, &range, &local, &clip, &mirrored),
              SINEW_STATUS_OUT_OF_RANGE, range);
  CHECK_KEEPS(sinew_mm_locate(&db, 0, &range, &range, &clip, &mirrored),
              SINEW_STATUS_OVERLAPPING_BUFFERS, range);
  CHECK(sinew_mm_locate(&db, 0, &range, &local, NULL, &mirrored), SINEW_STATUS_NULL_PARAMETER);
  sinew_mm_group group;
  memset(&group, 0x5a, sizeof group);
  CHECK_KEEPS(sinew_mm_database_group(&db, info.group_count, &group), SINEW_STATUS_OUT_OF_RANGE,
              group);
  if (strcmp(sinew_status_string(SINEW_STATUS_NOT_FOUND), "not found") != 0) exit(1);
}

/* Retargeting (self-contained): a map from the humanoid onto itself built
 * with the name tables, loaded, and run on a sampled walk pose; the output
 * equals the input (every joint is mapped, by name), and each bad input
 * gives its status. */
static alignas(16) uint8_t rt_skeleton_bytes[SINEW_HUMANOID_SKELETON_SIZE];
static alignas(16) uint8_t rt_clip_bytes[1 << 18];
static alignas(16) uint8_t rt_map_bytes[1 << 16];
static sinew_soa_transform rt_source[32], rt_out[32];

static void retarget(void) {
  size_t written = 0, size = 0;
  sinew_skeleton skel;
  sinew_clip walk;
  CHECK(sinew_humanoid_skeleton_write(rt_skeleton_bytes, sizeof rt_skeleton_bytes, &written),
        SINEW_STATUS_OK);
  CHECK(sinew_skeleton_load(rt_skeleton_bytes, written, &skel), SINEW_STATUS_OK);
  CHECK(sinew_humanoid_clip_write(&skel, SINEW_GAIT_WALK, 30.0f, rt_clip_bytes,
                                  sizeof rt_clip_bytes, &written),
        SINEW_STATUS_OK);
  CHECK(sinew_clip_load(rt_clip_bytes, written, &walk), SINEW_STATUS_OK);

  CHECK(sinew_retarget_map_build(&skel, &skel, 1, NULL, 0, &size), SINEW_STATUS_OK);
  if (size == 0 || size > sizeof rt_map_bytes) exit(1);
  CHECK(sinew_retarget_map_build(&skel, &skel, 1, rt_map_bytes, size - 16, &written),
        SINEW_STATUS_BUFFER_TOO_SMALL);
  CHECK(sinew_retarget_map_build(&skel, &skel, 1, rt_map_bytes, sizeof rt_map_bytes, &written),
        SINEW_STATUS_OK);
  if (written != size) exit(1);
  sinew_retarget_map map;
  CHECK(sinew_retarget_map_load(rt_map_bytes, written, &map), SINEW_STATUS_OK);
  if (map.source_joint_count != skel.joint_count || map.target_joint_count != skel.joint_count)
    exit(1);
  CHECK(sinew_retarget_map_check_skeletons(&map, &skel, &skel), SINEW_STATUS_OK);

  CHECK(sinew_clip_sample(&walk, 0.61f, SINEW_TIME_LOOP, rt_source, skel.soa_count),
        SINEW_STATUS_OK);
  CHECK(sinew_retarget(&map, rt_source, skel.soa_count, rt_out, skel.soa_count),
        SINEW_STATUS_OK);
  float worst = 0.0f;
  for (unsigned j = 0; j < skel.joint_count; j++) {
    const sinew_soa_transform *a = &rt_source[j / 4], *b = &rt_out[j / 4];
    float dot = 0.0f;
    for (int c = 0; c < 4; c++) dot += a->rotation[c][j % 4] * b->rotation[c][j % 4];
    float err = 1.0f - fabsf(dot);
    if (err > worst) worst = err;
    for (int c = 0; c < 3; c++) {
      float d = fabsf(a->translation[c][j % 4] - b->translation[c][j % 4]);
      if (d > worst) worst = d;
    }
  }
  printf("retarget_self_error %.3g\n", (double)worst);
  if (!(worst < 1e-5f)) exit(1);

  CHECK(sinew_retarget(&map, rt_source, skel.soa_count - 1, rt_out, skel.soa_count),
        SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_retarget(&map, rt_source, skel.soa_count, rt_source, skel.soa_count),
        SINEW_STATUS_OVERLAPPING_BUFFERS);
  CHECK(sinew_retarget(NULL, rt_source, skel.soa_count, rt_out, skel.soa_count),
        SINEW_STATUS_NULL_PARAMETER);
  sinew_retarget_map forged = map;
  forged.target_joint_count += 1;
  CHECK(sinew_retarget(&forged, rt_source, skel.soa_count, rt_out, skel.soa_count),
        SINEW_STATUS_INVALID_HANDLE);
  rt_map_bytes[0] ^= 0xff;
  CHECK(sinew_retarget_map_load(rt_map_bytes, written, &forged), SINEW_STATUS_INVALID_DATA);
  rt_map_bytes[0] ^= 0xff;
  /* Shifted by a byte: the magic is checked first. */
  CHECK(sinew_retarget_map_load(rt_map_bytes + 1, written - 1, &forged), SINEW_STATUS_INVALID_DATA);
}

/* Joint and update-rate LOD: a layout keeping every joint samples and
 * runs FK exactly as the plain calls do; the humanoid's three levels keep
 * 70, 26 and 20 joints; interpolation, the rate plan and the due list. */
static void lod(void) {
  static alignas(16) uint8_t lod_skel_bytes[SINEW_HUMANOID_SKELETON_SIZE];
  static alignas(16) uint8_t lod_walk_bytes[MAX_CLIP];
  static sinew_soa_transform rest[18], plain[18], via[18], mid[18];
  static sinew_float4x4 m_plain[SINEW_HUMANOID_JOINT_COUNT], m_via[SINEW_HUMANOID_JOINT_COUNT];
  uint8_t coarsest[SINEW_HUMANOID_JOINT_COUNT];
  uint16_t order[SINEW_HUMANOID_JOINT_COUNT], parents[SINEW_HUMANOID_JOINT_COUNT];
  uint16_t levels[SINEW_LOD_MAX_LEVELS];
  uint32_t level_count = 0;
  size_t written = 0, kept = 0;
  sinew_skeleton skel;
  sinew_clip walk;
  sinew_joint_lod l;
  CHECK(sinew_humanoid_skeleton_write(lod_skel_bytes, sizeof lod_skel_bytes, &written),
        SINEW_STATUS_OK);
  CHECK(sinew_skeleton_load(lod_skel_bytes, written, &skel), SINEW_STATUS_OK);
  CHECK(sinew_humanoid_clip_write(&skel, SINEW_GAIT_WALK, 30.0f, lod_walk_bytes,
                                  sizeof lod_walk_bytes, &written),
        SINEW_STATUS_OK);
  CHECK(sinew_clip_load(lod_walk_bytes, written, &walk), SINEW_STATUS_OK);
  size_t n = skel.joint_count, b = skel.soa_count;

  /* Every joint kept: the skeleton's own order, bit for bit. */
  memset(coarsest, 0, sizeof coarsest);
  CHECK(sinew_lod_build(&skel, coarsest, n, order, n, parents, n, rest, b, levels,
                        SINEW_LOD_MAX_LEVELS, &level_count),
        SINEW_STATUS_OK);
  if (level_count != 1 || levels[0] != n || order[5] != 5) exit(1);
  CHECK(sinew_joint_lod_init(order, parents, n, rest, b, levels, level_count, &l), SINEW_STATUS_OK);
  CHECK(sinew_clip_sample(&walk, 0.4f, SINEW_TIME_LOOP, plain, b), SINEW_STATUS_OK);
  CHECK(sinew_lod_clip_sample(&l, 0, &walk, 0.4f, SINEW_TIME_LOOP, via, b), SINEW_STATUS_OK);
  if (memcmp(plain, via, b * sizeof via[0]) != 0) exit(1);
  CHECK(sinew_skeleton_local_to_model(&skel, plain, b, NULL, m_plain, n), SINEW_STATUS_OK);
  CHECK(sinew_lod_local_to_model(&l, 0, via, b, NULL, m_via, n), SINEW_STATUS_OK);
  if (memcmp(m_plain, m_via, n * sizeof m_via[0]) != 0) exit(1);

  /* The humanoid rules: three levels of 70, 26 and 20 joints. */
  CHECK(sinew_lod_humanoid_levels(&skel, coarsest, n), SINEW_STATUS_OK);
  CHECK(sinew_lod_build(&skel, coarsest, n, order, n, parents, n, rest, b, levels,
                        SINEW_LOD_MAX_LEVELS, &level_count),
        SINEW_STATUS_OK);
  CHECK(sinew_joint_lod_init(order, parents, n, rest, b, levels, level_count, &l), SINEW_STATUS_OK);
  CHECK(sinew_joint_lod_kept(&l, 1, &kept), SINEW_STATUS_OK);
  printf("lod_kept %u %zu", level_count, kept);
  CHECK(sinew_joint_lod_kept(&l, 2, &kept), SINEW_STATUS_OK);
  printf(" %zu\n", kept);
  if (level_count != 3 || kept != 20) exit(1);
  CHECK(sinew_joint_lod_kept(&l, 3, &kept), SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_joint_lod_remap_pose(&l, skel.rest_pose, b, via, b), SINEW_STATUS_OK);
  if (memcmp(via, rest, b * sizeof via[0]) != 0) exit(1);
  /* Level 2 of the rest pose: every joint at its model-space rest. */
  CHECK(sinew_lod_local_to_model(&l, 2, rest, 5, NULL, m_via, n), SINEW_STATUS_OK);
  for (size_t k = 0; k < n; k++) {
    const float *ib = &skel.inverse_bind[order[k]].cols[3][0];
    const float *m = &m_via[k].cols[3][0];
    /* inverse bind · model = identity: its translation column is ~0. */
    const float *r0 = &skel.inverse_bind[order[k]].cols[0][0];
    for (int i = 0; i < 3; i++) {
      float t = ib[i] + r0[i] * m[0] + r0[4 + i] * m[1] + r0[8 + i] * m[2];
      if (fabsf(t) > 1e-4f) exit(1);
    }
  }
  CHECK(sinew_lod_local_to_model(&l, 2, rest, 4, NULL, m_via, n), SINEW_STATUS_BAD_LENGTH);
  CHECK(sinew_lod_local_to_model(NULL, 2, rest, 5, NULL, m_via, n), SINEW_STATUS_NULL_PARAMETER);
  sinew_joint_lod forged = l;
  forged.joint_count = 3;
  CHECK(sinew_lod_local_to_model(&forged, 0, rest, b, NULL, m_via, n), SINEW_STATUS_INVALID_HANDLE);
  order[1] = order[0];
  CHECK(sinew_joint_lod_init(order, parents, n, rest, b, levels, level_count, &forged),
        SINEW_STATUS_INVALID_DATA);

  /* Interpolation: halfway between a pose and itself is the pose. */
  CHECK(sinew_rate_interpolate_poses(plain, plain, b, 0.5f, mid), SINEW_STATUS_OK);
  for (size_t i = 0; i < b; i++)
    for (int r = 0; r < 3; r++)
      for (int k = 0; k < 4; k++)
        if (fabsf(mid[i].translation[r][k] - plain[i].translation[r][k]) > 1e-6f) exit(1);
  CHECK(sinew_rate_interpolate_poses(plain, plain, b, 1.5f, mid), SINEW_STATUS_INVALID_ARGUMENT);
  CHECK(sinew_rate_interpolate_poses(plain, plain, b, 0.5f, plain), SINEW_STATUS_OVERLAPPING_BUFFERS);
  CHECK(sinew_rate_interpolate_models(m_plain, m_plain, n, 0.25f, m_via), SINEW_STATUS_OK);
  if (fabsf(m_via[9].cols[3][1] - m_plain[9].cols[3][1]) > 1e-6f) exit(1);

  /* Rate plan: 16 equally unimportant characters at period 8, two per frame. */
  float importance[16];
  uint32_t scratch[16], due[16];
  uint8_t periods[16];
  size_t peak = 0, due_count = 0;
  for (int i = 0; i < 16; i++) importance[i] = 0.0f;
  sinew_rate_tiers tiers = {3.0f, 2.0f, 1.0f};
  CHECK(sinew_rate_plan(importance, 16, &tiers, 2, scratch, periods, &peak), SINEW_STATUS_OK);
  if (peak != 2 || periods[0] != 8) exit(1);
  CHECK(sinew_rate_due(11, periods, 16, due, 16, &due_count), SINEW_STATUS_OK);
  if (due_count != 2 || due[0] != 3 || due[1] != 11) exit(1);
  if (!sinew_rate_is_due(11, 3, 8) || sinew_rate_is_due(12, 3, 8)) exit(1);
  CHECK(sinew_rate_due(11, periods, 16, due, 1, &due_count), SINEW_STATUS_BUFFER_TOO_SMALL);
  CHECK(sinew_rate_plan(importance, 16, &tiers, 1, scratch, periods, &peak),
        SINEW_STATUS_INVALID_ARGUMENT);
  importance[3] = NAN;
  CHECK(sinew_rate_plan(importance, 16, &tiers, 2, scratch, periods, &peak),
        SINEW_STATUS_INVALID_ARGUMENT);
}

int main(int argc, char **argv) {
  printf("version %s\n", sinew_version());
  if (sinew_version_number() != SINEW_VERSION_NUMBER ||
      SINEW_VERSION_NUMBER != (SINEW_VERSION_MAJOR << 16 | SINEW_VERSION_MINOR << 8 |
                               SINEW_VERSION_PATCH)) {
    fprintf(stderr, "header version %u.%u.%u, library %s (0x%06x)\n", SINEW_VERSION_MAJOR,
            SINEW_VERSION_MINOR, SINEW_VERSION_PATCH, sinew_version(), sinew_version_number());
    return 1;
  }
  frame();
  build();
  bad_input();
  ik();
  secondary();
  events();
  player();
  blend_shapes();
  shape_drivers();
  rbf_drivers();
  delta_mush();
  retarget();
  lod();
  if (argc > 1) compressed(argv[1]);
  if (argc > 2) mesh_file(argv[2]);
  if (argc > 3) track_set_file(argv[3]);
  if (argc > 4) mm_database_file(argv[4]);
  printf("checks %u\n", checks);
  return 0;
}
