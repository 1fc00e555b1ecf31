//go:build !purego

#include "textflag.h"

// The arguments (k, a, lda, b, ldb, c, ldc) of both kernels, leading
// dimensions in bytes.
#define LOAD_ARGS \
	MOVQ k+0(FP), CX      \
	MOVQ a+8(FP), SI      \
	MOVQ lda+16(FP), R8   \
	MOVQ b+24(FP), DI     \
	MOVQ ldb+32(FP), R9   \
	MOVQ c+40(FP), DX     \
	MOVQ ldc+48(FP), R10  \
	SHLQ $3, R8           \
	SHLQ $3, R9           \
	SHLQ $3, R10

// The 4×8 block of C in Y0..Y7, two registers per row.
#define ZERO_BLOCK \
	VXORPD Y0, Y0, Y0 \
	VXORPD Y1, Y1, Y1 \
	VXORPD Y2, Y2, Y2 \
	VXORPD Y3, Y3, Y3 \
	VXORPD Y4, Y4, Y4 \
	VXORPD Y5, Y5, Y5 \
	VXORPD Y6, Y6, Y6 \
	VXORPD Y7, Y7, Y7

#define STORE_BLOCK \
	VMOVUPD Y0, (DX)   \
	VMOVUPD Y1, 32(DX) \
	ADDQ    R10, DX    \
	VMOVUPD Y2, (DX)   \
	VMOVUPD Y3, 32(DX) \
	ADDQ    R10, DX    \
	VMOVUPD Y4, (DX)   \
	VMOVUPD Y5, 32(DX) \
	ADDQ    R10, DX    \
	VMOVUPD Y6, (DX)   \
	VMOVUPD Y7, 32(DX)

// func kernel4x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
//
// Y0..Y7 hold the 4×8 block of C (two registers per row); each term l of
// the sum loads row l of the B panel (Y8, Y9), broadcasts a[i][l] for the
// four rows and adds the products with fused multiply–adds.
TEXT ·kernel4x8(SB), NOSPLIT, $0-56
	LOAD_ARGS
	LEAQ (SI)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	ZERO_BLOCK

loop:
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VBROADCASTSD (SI), Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VBROADCASTSD (R11), Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VBROADCASTSD (R12), Y12
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VBROADCASTSD (R13), Y13
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         $8, SI
	ADDQ         $8, R11
	ADDQ         $8, R12
	ADDQ         $8, R13
	ADDQ         R9, DI
	DECQ         CX
	JNZ          loop

	STORE_BLOCK
	VZEROUPPER
	RET

// func kernelT4x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
//
// As kernel4x8 with A transposed: term l broadcasts the four consecutive
// values a[l][0..3] of row l of the k×m matrix at a.
TEXT ·kernelT4x8(SB), NOSPLIT, $0-56
	LOAD_ARGS
	ZERO_BLOCK

loopT:
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VBROADCASTSD (SI), Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VBROADCASTSD 8(SI), Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VBROADCASTSD 16(SI), Y12
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VBROADCASTSD 24(SI), Y13
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          loopT

	STORE_BLOCK
	VZEROUPPER
	RET

// The 4×16 block of C in Z0..Z7, two registers per row (AVX-512F; VPXORQ,
// as VXORPD on Z registers needs AVX512DQ).
#define ZERO_BLOCK16 \
	VPXORQ Z0, Z0, Z0 \
	VPXORQ Z1, Z1, Z1 \
	VPXORQ Z2, Z2, Z2 \
	VPXORQ Z3, Z3, Z3 \
	VPXORQ Z4, Z4, Z4 \
	VPXORQ Z5, Z5, Z5 \
	VPXORQ Z6, Z6, Z6 \
	VPXORQ Z7, Z7, Z7

#define STORE_BLOCK16 \
	VMOVUPD Z0, (DX)   \
	VMOVUPD Z1, 64(DX) \
	ADDQ    R10, DX    \
	VMOVUPD Z2, (DX)   \
	VMOVUPD Z3, 64(DX) \
	ADDQ    R10, DX    \
	VMOVUPD Z4, (DX)   \
	VMOVUPD Z5, 64(DX) \
	ADDQ    R10, DX    \
	VMOVUPD Z6, (DX)   \
	VMOVUPD Z7, 64(DX)

// func kernel4x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
//
// kernel4x8 with AVX-512 registers: Z0..Z7 hold the 4×16 block of C, and
// each term of the sum is the same fused multiply–add per element, in the
// same order, so the two kernels give the same bits.
TEXT ·kernel4x16(SB), NOSPLIT, $0-56
	LOAD_ARGS
	LEAQ (SI)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	ZERO_BLOCK16

loop16:
	VMOVUPD      (DI), Z8
	VMOVUPD      64(DI), Z9
	VBROADCASTSD (SI), Z10
	VFMADD231PD  Z8, Z10, Z0
	VFMADD231PD  Z9, Z10, Z1
	VBROADCASTSD (R11), Z11
	VFMADD231PD  Z8, Z11, Z2
	VFMADD231PD  Z9, Z11, Z3
	VBROADCASTSD (R12), Z12
	VFMADD231PD  Z8, Z12, Z4
	VFMADD231PD  Z9, Z12, Z5
	VBROADCASTSD (R13), Z13
	VFMADD231PD  Z8, Z13, Z6
	VFMADD231PD  Z9, Z13, Z7
	ADDQ         $8, SI
	ADDQ         $8, R11
	ADDQ         $8, R12
	ADDQ         $8, R13
	ADDQ         R9, DI
	DECQ         CX
	JNZ          loop16

	STORE_BLOCK16
	VZEROUPPER
	RET

// func kernelT4x16(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
//
// kernelT4x8 with AVX-512 registers, as kernel4x16.
TEXT ·kernelT4x16(SB), NOSPLIT, $0-56
	LOAD_ARGS
	ZERO_BLOCK16

loopT16:
	VMOVUPD      (DI), Z8
	VMOVUPD      64(DI), Z9
	VBROADCASTSD (SI), Z10
	VFMADD231PD  Z8, Z10, Z0
	VFMADD231PD  Z9, Z10, Z1
	VBROADCASTSD 8(SI), Z11
	VFMADD231PD  Z8, Z11, Z2
	VFMADD231PD  Z9, Z11, Z3
	VBROADCASTSD 16(SI), Z12
	VFMADD231PD  Z8, Z12, Z4
	VFMADD231PD  Z9, Z12, Z5
	VBROADCASTSD 24(SI), Z13
	VFMADD231PD  Z8, Z13, Z6
	VFMADD231PD  Z9, Z13, Z7
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          loopT16

	STORE_BLOCK16
	VZEROUPPER
	RET

// The 6×8 block of C in Y0..Y11, two registers per row (AVX2: twelve
// sums in flight hide the latency of the fused multiply–adds, four or
// five cycles at two a cycle, where the eight of the 4×8 block fall
// short; BLIS's Haswell kernel is 6×8 for this reason).
#define ZERO_BLOCK6 \
	ZERO_BLOCK            \
	VXORPD Y8, Y8, Y8     \
	VXORPD Y9, Y9, Y9     \
	VXORPD Y10, Y10, Y10  \
	VXORPD Y11, Y11, Y11

#define STORE_BLOCK6 \
	STORE_BLOCK         \
	ADDQ    R10, DX     \
	VMOVUPD Y8, (DX)    \
	VMOVUPD Y9, 32(DX)  \
	ADDQ    R10, DX     \
	VMOVUPD Y10, (DX)   \
	VMOVUPD Y11, 32(DX)

// FMA_ROW6(src, bc, lo, hi) broadcasts a[i][l] from src into bc and adds
// its products with row l of the B panel (Y12, Y13) into the row's
// registers lo, hi.
#define FMA_ROW6(src, bc, lo, hi) \
	VBROADCASTSD src, bc      \
	VFMADD231PD  Y12, bc, lo  \
	VFMADD231PD  Y13, bc, hi

// func kernel6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
//
// kernel4x8 for a 6×8 block: the same fused multiply–add per element, in
// the same order, so the same bits. SI walks along rows 0..2 of the A
// panel (rows 1 and 2 at SI + lda, SI + 2·lda), R11 along rows 3..5.
TEXT ·kernel6x8(SB), NOSPLIT, $0-56
	LOAD_ARGS
	LEAQ (SI)(R8*2), R11
	ADDQ R8, R11
	ZERO_BLOCK6

loop6:
	VMOVUPD (DI), Y12
	VMOVUPD 32(DI), Y13
	FMA_ROW6((SI), Y14, Y0, Y1)
	FMA_ROW6((SI)(R8*1), Y15, Y2, Y3)
	FMA_ROW6((SI)(R8*2), Y14, Y4, Y5)
	FMA_ROW6((R11), Y15, Y6, Y7)
	FMA_ROW6((R11)(R8*1), Y14, Y8, Y9)
	FMA_ROW6((R11)(R8*2), Y15, Y10, Y11)
	ADDQ    $8, SI
	ADDQ    $8, R11
	ADDQ    R9, DI
	DECQ    CX
	JNZ     loop6

	STORE_BLOCK6
	VZEROUPPER
	RET

// func kernelT6x8(k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)
//
// kernel6x8 with A transposed: term l broadcasts the six consecutive
// values a[l][0..5] of row l of the k×m matrix at a.
TEXT ·kernelT6x8(SB), NOSPLIT, $0-56
	LOAD_ARGS
	ZERO_BLOCK6

loopT6:
	VMOVUPD (DI), Y12
	VMOVUPD 32(DI), Y13
	FMA_ROW6((SI), Y14, Y0, Y1)
	FMA_ROW6(8(SI), Y15, Y2, Y3)
	FMA_ROW6(16(SI), Y14, Y4, Y5)
	FMA_ROW6(24(SI), Y15, Y6, Y7)
	FMA_ROW6(32(SI), Y14, Y8, Y9)
	FMA_ROW6(40(SI), Y15, Y10, Y11)
	ADDQ    R8, SI
	ADDQ    R9, DI
	DECQ    CX
	JNZ     loopT6

	STORE_BLOCK6
	VZEROUPPER
	RET
