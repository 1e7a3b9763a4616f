//go:build amd64 && !purego

#include "textflag.h"

// Constants of expShiftSumAVX2 in ·expK, 32 bytes (4 copies) each.
#define LO 0(R8)
#define HI 32(R8)
#define INVLN2 64(R8)
#define ROUND 96(R8)
#define LN2HI 128(R8)
#define LN2LO 160(R8)
#define BIAS 192(R8)
#define C13 224(R8)

// Horizontal sum of Y13 + Y14 into X0.
#define HSUM \
	VADDPD       Y14, Y13, Y13; \
	VEXTRACTF128 $1, Y13, X0;   \
	VADDPD       X13, X0, X0;   \
	VHADDPD      X0, X0, X0

// func expShiftSumAVX2(dst, src []float64, shift float64) (n int, sum float64)
// len(src) is a multiple of 8; 8 exponentials per iteration, in two
// independent chains (Y0.., Y1..).
TEXT ·expShiftSumAVX2(SB), NOSPLIT, $0-72
	MOVQ         dst_base+0(FP), DI
	MOVQ         src_base+24(FP), SI
	MOVQ         src_len+32(FP), CX
	VBROADCASTSD shift+48(FP), Y15
	LEAQ         ·expK(SB), R8
	XORQ         AX, AX
	VXORPD       Y13, Y13, Y13
	VXORPD       Y14, Y14, Y14
	CMPQ         AX, CX
	JGE          expdone

exploop:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VSUBPD  Y15, Y0, Y0
	VSUBPD  Y15, Y1, Y1

	// Leave if a lane is NaN or above HI.
	VCMPPD $0x16, HI, Y0, Y2 // NLE_UQ
	VCMPPD $0x16, HI, Y1, Y3
	VORPD  Y2, Y3, Y2
	VPTEST Y2, Y2
	JNZ    expdone

	// Lanes at or below LO give 0: keep their masks, evaluate at LO.
	VCMPPD $0x1e, LO, Y0, Y2 // GT_OQ
	VCMPPD $0x1e, LO, Y1, Y3
	VMAXPD LO, Y0, Y0
	VMAXPD LO, Y1, Y1

	// k = round(x/ln2), kept as an integer in the low bits of Y4, Y5.
	VMOVUPD     ROUND, Y4
	VMOVUPD     ROUND, Y5
	VFMADD231PD INVLN2, Y0, Y4
	VFMADD231PD INVLN2, Y1, Y5
	VSUBPD      ROUND, Y4, Y6
	VSUBPD      ROUND, Y5, Y7

	// r = x − k·ln2, with ln2 in two parts.
	VFNMADD231PD LN2HI, Y6, Y0
	VFNMADD231PD LN2HI, Y7, Y1
	VFNMADD231PD LN2LO, Y6, Y0
	VFNMADD231PD LN2LO, Y7, Y1

	// e^r: Horner from 1/13! down to 1/0!.
	VMOVUPD C13, Y6
	VMOVUPD C13, Y7
	VFMADD213PD 256(R8), Y0, Y6
	VFMADD213PD 256(R8), Y1, Y7
	VFMADD213PD 288(R8), Y0, Y6
	VFMADD213PD 288(R8), Y1, Y7
	VFMADD213PD 320(R8), Y0, Y6
	VFMADD213PD 320(R8), Y1, Y7
	VFMADD213PD 352(R8), Y0, Y6
	VFMADD213PD 352(R8), Y1, Y7
	VFMADD213PD 384(R8), Y0, Y6
	VFMADD213PD 384(R8), Y1, Y7
	VFMADD213PD 416(R8), Y0, Y6
	VFMADD213PD 416(R8), Y1, Y7
	VFMADD213PD 448(R8), Y0, Y6
	VFMADD213PD 448(R8), Y1, Y7
	VFMADD213PD 480(R8), Y0, Y6
	VFMADD213PD 480(R8), Y1, Y7
	VFMADD213PD 512(R8), Y0, Y6
	VFMADD213PD 512(R8), Y1, Y7
	VFMADD213PD 544(R8), Y0, Y6
	VFMADD213PD 544(R8), Y1, Y7
	VFMADD213PD 576(R8), Y0, Y6
	VFMADD213PD 576(R8), Y1, Y7
	VFMADD213PD 608(R8), Y0, Y6
	VFMADD213PD 608(R8), Y1, Y7
	VFMADD213PD 640(R8), Y0, Y6
	VFMADD213PD 640(R8), Y1, Y7

	// 2^k in the exponent field.
	VPSLLQ $52, Y4, Y4
	VPSLLQ $52, Y5, Y5
	VPADDQ BIAS, Y4, Y4
	VPADDQ BIAS, Y5, Y5
	VMULPD Y4, Y6, Y6
	VMULPD Y5, Y7, Y7
	VANDPD Y2, Y6, Y6
	VANDPD Y3, Y7, Y7

	VMOVUPD Y6, (DI)(AX*8)
	VMOVUPD Y7, 32(DI)(AX*8)
	VADDPD  Y6, Y13, Y13
	VADDPD  Y7, Y14, Y14
	ADDQ    $8, AX
	CMPQ    AX, CX
	JLT     exploop

expdone:
	HSUM
	VZEROUPPER
	MOVQ  AX, n+56(FP)
	MOVSD X0, sum+64(FP)
	RET

// func subScaledMaxAVX2(dst, x, y []float64, s float64) float64
// dst = x − s·y (product rounded first), returns max(dst).
TEXT ·subScaledMaxAVX2(SB), NOSPLIT, $0-88
	MOVQ         dst_base+0(FP), DI
	MOVQ         x_base+24(FP), SI
	MOVQ         x_len+32(FP), CX
	MOVQ         y_base+48(FP), DX
	VBROADCASTSD s+72(FP), Y15
	XORQ         AX, AX
	MOVQ         $0xfff0000000000000, R9 // −Inf
	MOVQ         R9, X13
	VPBROADCASTQ X13, Y13
	VMOVAPD      Y13, Y14

ssmloop:
	VMULPD  (DX)(AX*8), Y15, Y0
	VMULPD  32(DX)(AX*8), Y15, Y1
	VMOVUPD (SI)(AX*8), Y2
	VMOVUPD 32(SI)(AX*8), Y3
	VSUBPD  Y0, Y2, Y2
	VSUBPD  Y1, Y3, Y3
	VMOVUPD Y2, (DI)(AX*8)
	VMOVUPD Y3, 32(DI)(AX*8)
	VMAXPD  Y2, Y13, Y13
	VMAXPD  Y3, Y14, Y14
	ADDQ    $8, AX
	CMPQ    AX, CX
	JLT     ssmloop

	VMAXPD       Y14, Y13, Y13
	VEXTRACTF128 $1, Y13, X0
	VMAXPD       X13, X0, X0
	VPERMILPD    $1, X0, X1
	VMAXPD       X1, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+80(FP)
	RET

// func maxAVX2(x []float64) float64
TEXT ·maxAVX2(SB), NOSPLIT, $0-32
	MOVQ    x_base+0(FP), SI
	MOVQ    x_len+8(FP), CX
	XORQ    AX, AX
	VMOVUPD (SI), Y13
	VMOVAPD Y13, Y14

maxloop:
	VMAXPD (SI)(AX*8), Y13, Y13
	VMAXPD 32(SI)(AX*8), Y14, Y14
	ADDQ   $8, AX
	CMPQ   AX, CX
	JLT    maxloop

	VMAXPD       Y14, Y13, Y13
	VEXTRACTF128 $1, Y13, X0
	VMAXPD       X13, X0, X0
	VPERMILPD    $1, X0, X1
	VMAXPD       X1, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+24(FP)
	RET

// func scaleAVX2(x []float64, a float64)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-32
	MOVQ         x_base+0(FP), DI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSD a+24(FP), Y15
	XORQ         AX, AX

scloop:
	VMULPD  (DI)(AX*8), Y15, Y0
	VMULPD  32(DI)(AX*8), Y15, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JLT     scloop
	VZEROUPPER
	RET

// func expShiftSumAVX512(dst, src []float64, shift float64) (n int, sum float64)
// ExpShiftSum with AVX-512: len(src) is a multiple of 16, 16 exponentials
// per iteration in two chains (Z0.., Z1..). x is clamped to [LO, 710]
// (lanes at or below LO are zeroed, 2^k·p overflows to +Inf above
// 709.78 by VSCALEFPD); k = round(x/ln2) by VRNDSCALEPD, r and e^r as in
// the AVX2 kernel; it stops before the first block holding a NaN.
TEXT ·expShiftSumAVX512(SB), NOSPLIT, $0-72
	MOVQ         dst_base+0(FP), DI
	MOVQ         src_base+24(FP), SI
	MOVQ         src_len+32(FP), CX
	VBROADCASTSD shift+48(FP), Z15
	LEAQ         ·expC(SB), R8
	XORQ         AX, AX
	VXORPD       Z13, Z13, Z13
	VXORPD       Z14, Z14, Z14
	CMPQ         AX, CX
	JGE          x5done

x5loop:
	VMOVUPD  (SI)(AX*8), Z0
	VMOVUPD  64(SI)(AX*8), Z1
	VSUBPD   Z15, Z0, Z0
	VSUBPD   Z15, Z1, Z1
	VCMPPD   $0x03, Z0, Z0, K1 // UNORD: NaN
	VCMPPD   $0x03, Z1, Z1, K3
	KORW     K1, K3, K1
	KORTESTW K1, K1
	JNZ      x5done

	VCMPPD.BCST $0x1e, (R8), Z0, K2 // x > LO
	VCMPPD.BCST $0x1e, (R8), Z1, K3
	VMAXPD.BCST (R8), Z0, Z0
	VMAXPD.BCST (R8), Z1, Z1
	VMINPD.BCST 8(R8), Z0, Z0
	VMINPD.BCST 8(R8), Z1, Z1

	VMULPD.BCST  16(R8), Z0, Z4 // x/ln2
	VMULPD.BCST  16(R8), Z1, Z5
	VRNDSCALEPD  $0, Z4, Z4     // k, to nearest
	VRNDSCALEPD  $0, Z5, Z5
	VFNMADD231PD.BCST 24(R8), Z4, Z0 // r = x − k·ln2 (two parts)
	VFNMADD231PD.BCST 24(R8), Z5, Z1
	VFNMADD231PD.BCST 32(R8), Z4, Z0
	VFNMADD231PD.BCST 32(R8), Z5, Z1

	VBROADCASTSD 40(R8), Z6 // Horner from 1/13! down to 1/0!
	VBROADCASTSD 40(R8), Z7
	VFMADD213PD.BCST 48(R8), Z0, Z6
	VFMADD213PD.BCST 48(R8), Z1, Z7
	VFMADD213PD.BCST 56(R8), Z0, Z6
	VFMADD213PD.BCST 56(R8), Z1, Z7
	VFMADD213PD.BCST 64(R8), Z0, Z6
	VFMADD213PD.BCST 64(R8), Z1, Z7
	VFMADD213PD.BCST 72(R8), Z0, Z6
	VFMADD213PD.BCST 72(R8), Z1, Z7
	VFMADD213PD.BCST 80(R8), Z0, Z6
	VFMADD213PD.BCST 80(R8), Z1, Z7
	VFMADD213PD.BCST 88(R8), Z0, Z6
	VFMADD213PD.BCST 88(R8), Z1, Z7
	VFMADD213PD.BCST 96(R8), Z0, Z6
	VFMADD213PD.BCST 96(R8), Z1, Z7
	VFMADD213PD.BCST 104(R8), Z0, Z6
	VFMADD213PD.BCST 104(R8), Z1, Z7
	VFMADD213PD.BCST 112(R8), Z0, Z6
	VFMADD213PD.BCST 112(R8), Z1, Z7
	VFMADD213PD.BCST 120(R8), Z0, Z6
	VFMADD213PD.BCST 120(R8), Z1, Z7
	VFMADD213PD.BCST 128(R8), Z0, Z6
	VFMADD213PD.BCST 128(R8), Z1, Z7
	VFMADD213PD.BCST 136(R8), Z0, Z6
	VFMADD213PD.BCST 136(R8), Z1, Z7
	VFMADD213PD.BCST 144(R8), Z0, Z6
	VFMADD213PD.BCST 144(R8), Z1, Z7

	VSCALEFPD Z4, Z6, Z6 // e^r·2^k
	VSCALEFPD Z5, Z7, Z7
	VMOVAPD.Z Z6, K2, Z6 // 0 at or below LO
	VMOVAPD.Z Z7, K3, Z7

	VMOVUPD Z6, (DI)(AX*8)
	VMOVUPD Z7, 64(DI)(AX*8)
	VADDPD  Z6, Z13, Z13
	VADDPD  Z7, Z14, Z14
	ADDQ    $16, AX
	CMPQ    AX, CX
	JLT     x5loop

x5done:
	VADDPD        Z14, Z13, Z13
	VEXTRACTF64X4 $1, Z13, Y0
	VADDPD        Y13, Y0, Y13
	VEXTRACTF128  $1, Y13, X0
	VADDPD        X13, X0, X0
	VHADDPD       X0, X0, X0
	VZEROUPPER
	MOVQ          AX, n+56(FP)
	MOVSD         X0, sum+64(FP)
	RET
