//go:build !purego

#include "textflag.h"

// The arguments (k, a, lda, b, ldb, c, ldc) of both kernels, leading
// dimensions in bytes.
#define LOAD_ARGS \
	MOVD k+0(FP), R0    \
	MOVD a+8(FP), R1    \
	MOVD lda+16(FP), R2 \
	MOVD b+24(FP), R3   \
	MOVD ldb+32(FP), R4 \
	MOVD c+40(FP), R5   \
	MOVD ldc+48(FP), R6 \
	LSL  $3, R2         \
	LSL  $3, R4         \
	LSL  $3, R6

// The 4×8 block of C in V0..V15, four registers of two per row.
#define ZERO_BLOCK \
	VEOR V0.B16, V0.B16, V0.B16    \
	VEOR V1.B16, V1.B16, V1.B16    \
	VEOR V2.B16, V2.B16, V2.B16    \
	VEOR V3.B16, V3.B16, V3.B16    \
	VEOR V4.B16, V4.B16, V4.B16    \
	VEOR V5.B16, V5.B16, V5.B16    \
	VEOR V6.B16, V6.B16, V6.B16    \
	VEOR V7.B16, V7.B16, V7.B16    \
	VEOR V8.B16, V8.B16, V8.B16    \
	VEOR V9.B16, V9.B16, V9.B16    \
	VEOR V10.B16, V10.B16, V10.B16 \
	VEOR V11.B16, V11.B16, V11.B16 \
	VEOR V12.B16, V12.B16, V12.B16 \
	VEOR V13.B16, V13.B16, V13.B16 \
	VEOR V14.B16, V14.B16, V14.B16 \
	VEOR V15.B16, V15.B16, V15.B16

// One term of the sum: row l of the B panel is in V16..V19 and a[i][l] of
// the four rows broadcast in V20..V23; fused multiply–adds into the block.
#define FMA_TERM \
	VFMLA V16.D2, V20.D2, V0.D2  \
	VFMLA V17.D2, V20.D2, V1.D2  \
	VFMLA V18.D2, V20.D2, V2.D2  \
	VFMLA V19.D2, V20.D2, V3.D2  \
	VFMLA V16.D2, V21.D2, V4.D2  \
	VFMLA V17.D2, V21.D2, V5.D2  \
	VFMLA V18.D2, V21.D2, V6.D2  \
	VFMLA V19.D2, V21.D2, V7.D2  \
	VFMLA V16.D2, V22.D2, V8.D2  \
	VFMLA V17.D2, V22.D2, V9.D2  \
	VFMLA V18.D2, V22.D2, V10.D2 \
	VFMLA V19.D2, V22.D2, V11.D2 \
	VFMLA V16.D2, V23.D2, V12.D2 \
	VFMLA V17.D2, V23.D2, V13.D2 \
	VFMLA V18.D2, V23.D2, V14.D2 \
	VFMLA V19.D2, V23.D2, V15.D2

#define STORE_BLOCK \
	VST1 [V0.D2, V1.D2, V2.D2, V3.D2], (R5)     \
	ADD  R6, R5                                 \
	VST1 [V4.D2, V5.D2, V6.D2, V7.D2], (R5)     \
	ADD  R6, R5                                 \
	VST1 [V8.D2, V9.D2, V10.D2, V11.D2], (R5)   \
	ADD  R6, R5                                 \
	VST1 [V12.D2, V13.D2, V14.D2, V15.D2], (R5)

// func kernel4x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
//
// V0..V15 hold the 4×8 block of C; each term l of the sum loads row l of
// the B panel (V16..V19), broadcasts a[i][l] of the four rows (R1, R7,
// R8, R9 walk along them) and adds the products with fused
// multiply–adds (FMLA), as the amd64 kernels do.
TEXT ·kernel4x8(SB), NOSPLIT, $0-56
	LOAD_ARGS
	ADD R2, R1, R7
	ADD R2, R7, R8
	ADD R2, R8, R9
	ZERO_BLOCK

loop:
	VLD1.P  (R3)(R4), [V16.D2, V17.D2, V18.D2, V19.D2]
	VLD1R.P 8(R1), [V20.D2]
	VLD1R.P 8(R7), [V21.D2]
	VLD1R.P 8(R8), [V22.D2]
	VLD1R.P 8(R9), [V23.D2]
	FMA_TERM
	SUBS    $1, R0
	BNE     loop

	STORE_BLOCK
	RET

// func kernelT4x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
//
// As kernel4x8 with A transposed: term l broadcasts the four consecutive
// values a[l][0..3] of row l of the k×m matrix at a (R1, R7, R8, R9 walk
// down its four columns).
TEXT ·kernelT4x8(SB), NOSPLIT, $0-56
	LOAD_ARGS
	ADD $8, R1, R7
	ADD $16, R1, R8
	ADD $24, R1, R9
	ZERO_BLOCK

loopT:
	VLD1.P  (R3)(R4), [V16.D2, V17.D2, V18.D2, V19.D2]
	VLD1R.P (R1)(R2), [V20.D2]
	VLD1R.P (R7)(R2), [V21.D2]
	VLD1R.P (R8)(R2), [V22.D2]
	VLD1R.P (R9)(R2), [V23.D2]
	FMA_TERM
	SUBS    $1, R0
	BNE     loopT

	STORE_BLOCK
	RET
