// The output tile row of this workgroup, for gemm.glsl and texel_block.glsl: gl_WorkGroupID.y, or where a kernel
// defines ROWS_IN_Z (the convolutions, whose M = B*OH*OW pixels can need more tile rows than
// maxComputeWorkGroupCount[1], 65535 on many devices: a batch of ~5000 images at 28x28 with 64-row tiles) the rows
// folded into z by the host (gpu::fold_rows): row y + z * gl_NumWorkGroups.y. Tile rows past M are exact as any
// edge: their loads read 0 (or are clamped) and their outputs are skipped.
#ifndef TRAINSCOPE_TILE_ROW_GLSL
#define TRAINSCOPE_TILE_ROW_GLSL
#if ROWS_IN_Z
uint tile_row() { return gl_WorkGroupID.y + gl_WorkGroupID.z * gl_NumWorkGroups.y; }
#else
uint tile_row() { return gl_WorkGroupID.y; }
#endif
#endif
