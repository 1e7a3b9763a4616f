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

// func reduceSetAVX2(dst, src []float64, O, n, s int)
// dst[o·s+i] = Σ_c src[(o·n+c)·s+i] for s >= 4: blocks of 16 lanes, then
// of 4, the last block overlapping the one before when s%4 != 0.
TEXT ·reduceSetAVX2(SB), NOSPLIT, $0-72
	MOVQ  dst_base+0(FP), DX
	MOVQ  src_base+24(FP), BX
	MOVQ  O+48(FP), R8
	MOVQ  n+56(FP), R9
	MOVQ  s+64(FP), R10
	MOVQ  R10, R11
	SHLQ  $3, R11   // bytes per row of s
	MOVQ  R11, R14
	IMULQ R9, R14   // bytes per block of n rows

rsOuter:
	TESTQ R8, R8
	JZ    rsDone
	XORQ  AX, AX

rs16:
	LEAQ    16(AX), CX
	CMPQ    CX, R10
	JGT     rs4
	LEAQ    (BX)(AX*8), R13
	VMOVUPD (R13), Y0
	VMOVUPD 32(R13), Y1
	VMOVUPD 64(R13), Y2
	VMOVUPD 96(R13), Y3
	MOVQ    R9, CX
	DECQ    CX
	JZ      rs16st

rs16c:
	ADDQ   R11, R13
	VADDPD (R13), Y0, Y0
	VADDPD 32(R13), Y1, Y1
	VADDPD 64(R13), Y2, Y2
	VADDPD 96(R13), Y3, Y3
	DECQ   CX
	JNZ    rs16c

rs16st:
	VMOVUPD Y0, (DX)(AX*8)
	VMOVUPD Y1, 32(DX)(AX*8)
	VMOVUPD Y2, 64(DX)(AX*8)
	VMOVUPD Y3, 96(DX)(AX*8)
	ADDQ    $16, AX
	JMP     rs16

rs4:
	LEAQ 4(AX), CX
	CMPQ CX, R10
	JGT  rsTail

rs4body:
	LEAQ    (BX)(AX*8), R13
	VMOVUPD (R13), Y0
	MOVQ    R9, CX
	DECQ    CX
	JZ      rs4st

rs4c:
	ADDQ   R11, R13
	VADDPD (R13), Y0, Y0
	DECQ   CX
	JNZ    rs4c

rs4st:
	VMOVUPD Y0, (DX)(AX*8)
	ADDQ    $4, AX
	JMP     rs4

rsTail:
	CMPQ AX, R10
	JGE  rsNext
	MOVQ R10, AX
	SUBQ $4, AX
	JMP  rs4body

rsNext:
	ADDQ R14, BX
	LEAQ (DX)(R10*8), DX
	DECQ R8
	JMP  rsOuter

rsDone:
	VZEROUPPER
	RET
