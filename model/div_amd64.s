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
