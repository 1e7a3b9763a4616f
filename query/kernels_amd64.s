//go:build amd64 && !purego

#include "textflag.h"

// func addToAVX2(dst, src []float64)
// dst[i] += src[i] for i < len(src), 16 elements per iteration.
TEXT ·addToAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX
	JZ   tail

loop16:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD 32(SI)(AX*8), Y1
	VMOVUPD 64(SI)(AX*8), Y2
	VMOVUPD 96(SI)(AX*8), Y3
	VADDPD  (DI)(AX*8), Y0, Y0
	VADDPD  32(DI)(AX*8), Y1, Y1
	VADDPD  64(DI)(AX*8), Y2, Y2
	VADDPD  96(DI)(AX*8), Y3, Y3
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	VMOVUPD Y2, 64(DI)(AX*8)
	VMOVUPD Y3, 96(DI)(AX*8)
	ADDQ    $16, AX
	CMPQ    AX, BX
	JLT     loop16
	VZEROUPPER

tail:
	CMPQ AX, CX
	JGE  done

tailloop:
	MOVSD (SI)(AX*8), X0
	ADDSD (DI)(AX*8), X0
	MOVSD X0, (DI)(AX*8)
	INCQ  AX
	CMPQ  AX, CX
	JLT   tailloop

done:
	RET
