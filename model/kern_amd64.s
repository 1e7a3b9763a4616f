//go:build amd64 && !purego

#include "textflag.h"

// func divAVX(x []float64, s float64)
// len(x) is a multiple of 8; two independent 4-lane divisions per
// iteration.
TEXT ·divAVX(SB), NOSPLIT, $0-32
	MOVQ         x_base+0(FP), DI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSD s+24(FP), Y15
	SHRQ         $3, CX
	JZ           done

loop:
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VDIVPD  Y15, Y0, Y0
	VDIVPD  Y15, Y1, Y1
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	ADDQ    $64, DI
	DECQ    CX
	JNZ     loop

done:
	VZEROUPPER
	RET

// func mulAVX(d, s []float64)
// d[i] *= s[i]; len(d) is a multiple of 8 and len(s) at least len(d).
TEXT ·mulAVX(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
	XORQ AX, AX
	TESTQ CX, CX
	JZ   mdone

mloop:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VMULPD  (DI)(AX*8), Y0, Y0
	VMULPD  32(DI)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JLT     mloop

mdone:
	VZEROUPPER
	RET

// func addAVX(d, s []float64)
// d[i] += s[i]; len(d) is a multiple of 8 and len(s) at least len(d).
TEXT ·addAVX(SB), NOSPLIT, $0-48
	MOVQ  d_base+0(FP), DI
	MOVQ  d_len+8(FP), CX
	MOVQ  s_base+24(FP), SI
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    adone

aloop:
	VMOVUPD (DI)(AX*8), Y0
	VMOVUPD 32(DI)(AX*8), Y1
	VADDPD  (SI)(AX*8), Y0, Y0
	VADDPD  32(SI)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JLT     aloop

adone:
	VZEROUPPER
	RET
