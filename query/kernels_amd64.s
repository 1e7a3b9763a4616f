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
// dst[o·s+i] = Σ_c src[(o·n+c)·s+i] for s >= 4. Per row of s lanes:
// blocks of 16 lanes, then the remaining r < 16 lanes as v = ceil(r/4)
// vectors at t0, t0+4, ... and s-4 (the last one may overlap the one
// before: dst is written, not added to, so lanes computed twice agree).
// Each vector is summed over c in two registers (even and odd c, for
// two independent chains of adds) and stored once.
TEXT ·reduceSetAVX2(SB), NOSPLIT, $0-72
	MOVQ  dst_base+0(FP), DX
	MOVQ  src_base+24(FP), BX
	MOVQ  O+48(FP), R8
	MOVQ  n+56(FP), R9
	MOVQ  s+64(FP), R10
	MOVQ  R10, R11
	SHLQ  $3, R11        // bytes per row of s
	MOVQ  R11, R14
	IMULQ R9, R14        // bytes per block of n rows
	MOVQ  R10, R12
	ANDQ  $-16, R12      // t0: lanes in 16-blocks
	MOVQ  R12, SI
	SHLQ  $3, SI         // t0 in bytes
	LEAQ  -32(R11), DI   // (s-4) in bytes
	MOVQ  R10, AX
	SUBQ  R12, AX        // r
	ADDQ  $3, AX
	SHRQ  $2, AX         // v = ceil(r/4), 0..4
	MOVQ  AX, R12        // v

rsOuter:
	TESTQ R8, R8
	JZ    rsDone
	XORQ  AX, AX

rs16:
	LEAQ 16(AX), CX
	CMPQ CX, R10
	JGT  rsTail
	LEAQ (BX)(AX*8), R13
	VMOVUPD (R13), Y0
	VMOVUPD 32(R13), Y1
	VMOVUPD 64(R13), Y2
	VMOVUPD 96(R13), Y3
	MOVQ R9, CX
	DECQ CX
	CMPQ CX, $2
	JLT  rs16s1
	ADDQ R11, R13
	VMOVUPD (R13), Y4
	VMOVUPD 32(R13), Y5
	VMOVUPD 64(R13), Y6
	VMOVUPD 96(R13), Y7
	DECQ CX
rs16p:
	CMPQ CX, $2
	JLT  rs16p1
	ADDQ R11, R13
	VADDPD (R13), Y0, Y0
	VADDPD 32(R13), Y1, Y1
	VADDPD 64(R13), Y2, Y2
	VADDPD 96(R13), Y3, Y3
	ADDQ R11, R13
	VADDPD (R13), Y4, Y4
	VADDPD 32(R13), Y5, Y5
	VADDPD 64(R13), Y6, Y6
	VADDPD 96(R13), Y7, Y7
	SUBQ $2, CX
	JMP  rs16p
rs16p1:
	TESTQ CX, CX
	JZ   rs16cb
	ADDQ R11, R13
	VADDPD (R13), Y0, Y0
	VADDPD 32(R13), Y1, Y1
	VADDPD 64(R13), Y2, Y2
	VADDPD 96(R13), Y3, Y3
rs16cb:
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	JMP  rs16st
rs16s1:
	TESTQ CX, CX
	JZ   rs16st
	ADDQ R11, R13
	VADDPD (R13), Y0, Y0
	VADDPD 32(R13), Y1, Y1
	VADDPD 64(R13), Y2, Y2
	VADDPD 96(R13), Y3, Y3
rs16st:
	VMOVUPD Y0, (DX)(AX*8)
	VMOVUPD Y1, 32(DX)(AX*8)
	VMOVUPD Y2, 64(DX)(AX*8)
	VMOVUPD Y3, 96(DX)(AX*8)
	ADDQ $16, AX
	JMP  rs16

rsTail:
	CMPQ R12, $2
	JLT  rsTail1
	JEQ  rsT2
	CMPQ R12, $3
	JEQ  rsT3
	JMP  rsT4

rsTail1:
	CMPQ R12, $1
	JEQ  rsT1
	JMP  rsNext

rsT1:
	MOVQ BX, R13
	VMOVUPD (R13)(DI*1), Y0
	MOVQ R9, CX
	DECQ CX
	CMPQ CX, $2
	JLT  rsT1s1
	ADDQ R11, R13
	VMOVUPD (R13)(DI*1), Y1
	DECQ CX
rsT1p:
	CMPQ CX, $2
	JLT  rsT1p1
	ADDQ R11, R13
	VADDPD (R13)(DI*1), Y0, Y0
	ADDQ R11, R13
	VADDPD (R13)(DI*1), Y1, Y1
	SUBQ $2, CX
	JMP  rsT1p
rsT1p1:
	TESTQ CX, CX
	JZ   rsT1cb
	ADDQ R11, R13
	VADDPD (R13)(DI*1), Y0, Y0
rsT1cb:
	VADDPD Y1, Y0, Y0
	JMP  rsT1st
rsT1s1:
	TESTQ CX, CX
	JZ   rsT1st
	ADDQ R11, R13
	VADDPD (R13)(DI*1), Y0, Y0
rsT1st:
	VMOVUPD Y0, (DX)(DI*1)
	JMP  rsNext

rsT2:
	MOVQ BX, R13
	VMOVUPD (R13)(SI*1), Y0
	VMOVUPD (R13)(DI*1), Y1
	MOVQ R9, CX
	DECQ CX
	CMPQ CX, $2
	JLT  rsT2s1
	ADDQ R11, R13
	VMOVUPD (R13)(SI*1), Y2
	VMOVUPD (R13)(DI*1), Y3
	DECQ CX
rsT2p:
	CMPQ CX, $2
	JLT  rsT2p1
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y0, Y0
	VADDPD (R13)(DI*1), Y1, Y1
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y2, Y2
	VADDPD (R13)(DI*1), Y3, Y3
	SUBQ $2, CX
	JMP  rsT2p
rsT2p1:
	TESTQ CX, CX
	JZ   rsT2cb
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y0, Y0
	VADDPD (R13)(DI*1), Y1, Y1
rsT2cb:
	VADDPD Y2, Y0, Y0
	VADDPD Y3, Y1, Y1
	JMP  rsT2st
rsT2s1:
	TESTQ CX, CX
	JZ   rsT2st
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y0, Y0
	VADDPD (R13)(DI*1), Y1, Y1
rsT2st:
	VMOVUPD Y0, (DX)(SI*1)
	VMOVUPD Y1, (DX)(DI*1)
	JMP  rsNext

rsT3:
	MOVQ BX, R13
	VMOVUPD (R13)(SI*1), Y0
	VMOVUPD 32(R13)(SI*1), Y1
	VMOVUPD (R13)(DI*1), Y2
	MOVQ R9, CX
	DECQ CX
	CMPQ CX, $2
	JLT  rsT3s1
	ADDQ R11, R13
	VMOVUPD (R13)(SI*1), Y3
	VMOVUPD 32(R13)(SI*1), Y4
	VMOVUPD (R13)(DI*1), Y5
	DECQ CX
rsT3p:
	CMPQ CX, $2
	JLT  rsT3p1
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y0, Y0
	VADDPD 32(R13)(SI*1), Y1, Y1
	VADDPD (R13)(DI*1), Y2, Y2
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y3, Y3
	VADDPD 32(R13)(SI*1), Y4, Y4
	VADDPD (R13)(DI*1), Y5, Y5
	SUBQ $2, CX
	JMP  rsT3p
rsT3p1:
	TESTQ CX, CX
	JZ   rsT3cb
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y0, Y0
	VADDPD 32(R13)(SI*1), Y1, Y1
	VADDPD (R13)(DI*1), Y2, Y2
rsT3cb:
	VADDPD Y3, Y0, Y0
	VADDPD Y4, Y1, Y1
	VADDPD Y5, Y2, Y2
	JMP  rsT3st
rsT3s1:
	TESTQ CX, CX
	JZ   rsT3st
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y0, Y0
	VADDPD 32(R13)(SI*1), Y1, Y1
	VADDPD (R13)(DI*1), Y2, Y2
rsT3st:
	VMOVUPD Y0, (DX)(SI*1)
	VMOVUPD Y1, 32(DX)(SI*1)
	VMOVUPD Y2, (DX)(DI*1)
	JMP  rsNext

rsT4:
	MOVQ BX, R13
	VMOVUPD (R13)(SI*1), Y0
	VMOVUPD 32(R13)(SI*1), Y1
	VMOVUPD 64(R13)(SI*1), Y2
	VMOVUPD (R13)(DI*1), Y3
	MOVQ R9, CX
	DECQ CX
	CMPQ CX, $2
	JLT  rsT4s1
	ADDQ R11, R13
	VMOVUPD (R13)(SI*1), Y4
	VMOVUPD 32(R13)(SI*1), Y5
	VMOVUPD 64(R13)(SI*1), Y6
	VMOVUPD (R13)(DI*1), Y7
	DECQ CX
rsT4p:
	CMPQ CX, $2
	JLT  rsT4p1
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y0, Y0
	VADDPD 32(R13)(SI*1), Y1, Y1
	VADDPD 64(R13)(SI*1), Y2, Y2
	VADDPD (R13)(DI*1), Y3, Y3
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y4, Y4
	VADDPD 32(R13)(SI*1), Y5, Y5
	VADDPD 64(R13)(SI*1), Y6, Y6
	VADDPD (R13)(DI*1), Y7, Y7
	SUBQ $2, CX
	JMP  rsT4p
rsT4p1:
	TESTQ CX, CX
	JZ   rsT4cb
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y0, Y0
	VADDPD 32(R13)(SI*1), Y1, Y1
	VADDPD 64(R13)(SI*1), Y2, Y2
	VADDPD (R13)(DI*1), Y3, Y3
rsT4cb:
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	JMP  rsT4st
rsT4s1:
	TESTQ CX, CX
	JZ   rsT4st
	ADDQ R11, R13
	VADDPD (R13)(SI*1), Y0, Y0
	VADDPD 32(R13)(SI*1), Y1, Y1
	VADDPD 64(R13)(SI*1), Y2, Y2
	VADDPD (R13)(DI*1), Y3, Y3
rsT4st:
	VMOVUPD Y0, (DX)(SI*1)
	VMOVUPD Y1, 32(DX)(SI*1)
	VMOVUPD Y2, 64(DX)(SI*1)
	VMOVUPD Y3, (DX)(DI*1)
	JMP  rsNext

rsNext:
	ADDQ R14, BX
	ADDQ R11, DX
	DECQ R8
	JMP  rsOuter

rsDone:
	VZEROUPPER
	RET

// func reduceLastAVX2(dst, src []float64, n int)
// dst[o] = Σ_c src[o·n+c] for n >= 4 and len(dst) a multiple of 4: four
// rows at a time, each summed in a register (the last n%4 lanes by a
// masked load), then the four horizontal sums combined into one store.
TEXT ·reduceLastAVX2(SB), NOSPLIT, $0-56
	MOVQ    dst_base+0(FP), DI
	MOVQ    dst_len+8(FP), R8
	MOVQ    src_base+24(FP), SI
	MOVQ    n+48(FP), R9
	MOVQ    R9, R10
	SHLQ    $3, R10            // bytes per row
	MOVQ    R9, R11
	SHRQ    $2, R11            // full vectors per row
	MOVQ    R9, AX
	ANDQ    $3, AX
	SHLQ    $5, AX
	LEAQ    ·tailMask(SB), R12
	VMOVDQU (R12)(AX*1), Y15   // mask of the n%4 tail lanes
	XORQ    BX, BX

rlLoop:
	CMPQ   BX, R8
	JGE    rlDone
	LEAQ   (SI)(R10*1), DX
	LEAQ   (SI)(R10*2), R13
	LEAQ   (DX)(R10*2), R14
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   CX, CX
	MOVQ   R11, R12

rlVec:
	VADDPD (SI)(CX*1), Y0, Y0
	VADDPD (DX)(CX*1), Y1, Y1
	VADDPD (R13)(CX*1), Y2, Y2
	VADDPD (R14)(CX*1), Y3, Y3
	ADDQ   $32, CX
	DECQ   R12
	JNZ    rlVec

	VMASKMOVPD (SI)(CX*1), Y15, Y4
	VMASKMOVPD (DX)(CX*1), Y15, Y5
	VMASKMOVPD (R13)(CX*1), Y15, Y6
	VMASKMOVPD (R14)(CX*1), Y15, Y7
	VADDPD     Y4, Y0, Y0
	VADDPD     Y5, Y1, Y1
	VADDPD     Y6, Y2, Y2
	VADDPD     Y7, Y3, Y3

	VHADDPD    Y1, Y0, Y4      // a01 b01 a23 b23
	VHADDPD    Y3, Y2, Y5      // c01 d01 c23 d23
	VPERM2F128 $0x21, Y5, Y4, Y6
	VBLENDPD   $0x0c, Y5, Y4, Y7
	VADDPD     Y6, Y7, Y4
	VMOVUPD    Y4, (DI)(BX*8)
	ADDQ       $4, BX
	LEAQ       (SI)(R10*4), SI
	JMP        rlLoop

rlDone:
	VZEROUPPER
	RET

// func broadcastAVX2(dst, src []float64, O, n, s int, add bool)
// dst[(o·n+c)·s+i] = src[o·s+i] (add false) or += (add true), for s >= 4:
// blocks of 16 lanes, then of 4, each loaded once and written to the n
// rows; the s%4 last lanes by an overlapping block (set) or one lane at a
// time (add).
TEXT ·broadcastAVX2(SB), NOSPLIT, $0-73
	MOVQ    dst_base+0(FP), DX
	MOVQ    src_base+24(FP), BX
	MOVQ    O+48(FP), R8
	MOVQ    n+56(FP), R9
	MOVQ    s+64(FP), R10
	MOVQ    R10, R11
	SHLQ    $3, R11       // bytes per row of s
	MOVQ    R11, R14
	IMULQ   R9, R14       // bytes per block of n rows
	MOVBLZX add+72(FP), AX
	TESTQ   AX, AX
	JNZ     baOuter

bsOuter:
	TESTQ R8, R8
	JZ   bsDone
	XORQ AX, AX
bs16:
	LEAQ 16(AX), CX
	CMPQ CX, R10
	JGT  bs4
	VMOVUPD (BX)(AX*8), Y0
	VMOVUPD 32(BX)(AX*8), Y1
	VMOVUPD 64(BX)(AX*8), Y2
	VMOVUPD 96(BX)(AX*8), Y3
	LEAQ (DX)(AX*8), R13
	MOVQ R9, CX
bs16c:
	VMOVUPD Y0, (R13)
	VMOVUPD Y1, 32(R13)
	VMOVUPD Y2, 64(R13)
	VMOVUPD Y3, 96(R13)
	ADDQ R11, R13
	DECQ CX
	JNZ  bs16c
	ADDQ $16, AX
	JMP  bs16
bs4:
	LEAQ 4(AX), CX
	CMPQ CX, R10
	JGT  bsTail
	VMOVUPD (BX)(AX*8), Y0
	LEAQ (DX)(AX*8), R13
	MOVQ R9, CX
bs4c:
	VMOVUPD Y0, (R13)
	ADDQ R11, R13
	DECQ CX
	JNZ  bs4c
	ADDQ $4, AX
	JMP  bs4
bsTail:
	CMPQ AX, R10
	JGE  bsNext
	LEAQ -4(R10), AX
	VMOVUPD (BX)(AX*8), Y0
	LEAQ (DX)(AX*8), R13
	MOVQ R9, CX
bsTc:
	VMOVUPD Y0, (R13)
	ADDQ R11, R13
	DECQ CX
	JNZ  bsTc
bsNext:
	ADDQ R11, BX
	ADDQ R14, DX
	DECQ R8
	JMP  bsOuter
bsDone:
	VZEROUPPER
	RET

baOuter:
	TESTQ R8, R8
	JZ   baDone
	XORQ AX, AX
ba16:
	LEAQ 16(AX), CX
	CMPQ CX, R10
	JGT  ba4
	VMOVUPD (BX)(AX*8), Y0
	VMOVUPD 32(BX)(AX*8), Y1
	VMOVUPD 64(BX)(AX*8), Y2
	VMOVUPD 96(BX)(AX*8), Y3
	LEAQ (DX)(AX*8), R13
	MOVQ R9, CX
ba16c:
	VADDPD (R13), Y0, Y4
	VADDPD 32(R13), Y1, Y5
	VADDPD 64(R13), Y2, Y6
	VADDPD 96(R13), Y3, Y7
	VMOVUPD Y4, (R13)
	VMOVUPD Y5, 32(R13)
	VMOVUPD Y6, 64(R13)
	VMOVUPD Y7, 96(R13)
	ADDQ R11, R13
	DECQ CX
	JNZ  ba16c
	ADDQ $16, AX
	JMP  ba16
ba4:
	LEAQ 4(AX), CX
	CMPQ CX, R10
	JGT  baTail
	VMOVUPD (BX)(AX*8), Y0
	LEAQ (DX)(AX*8), R13
	MOVQ R9, CX
ba4c:
	VADDPD (R13), Y0, Y4
	VMOVUPD Y4, (R13)
	ADDQ R11, R13
	DECQ CX
	JNZ  ba4c
	ADDQ $4, AX
	JMP  ba4
baTail:
	CMPQ AX, R10
	JGE  baNext
baScalar: // the s%4 last lanes one at a time
	VMOVSD (BX)(AX*8), X0
	LEAQ   (DX)(AX*8), R13
	MOVQ   R9, CX
baSc:
	VADDSD (R13), X0, X4
	VMOVSD X4, (R13)
	ADDQ   R11, R13
	DECQ   CX
	JNZ    baSc
	INCQ   AX
	CMPQ   AX, R10
	JLT    baScalar
baNext:
	ADDQ R11, BX
	ADDQ R14, DX
	DECQ R8
	JMP  baOuter
baDone:
	VZEROUPPER
	RET

// func broadcastLastAVX2(dst, src []float64, n int, add bool)
// dst[o·n+c] = src[o] (add false) or += (add true) for n >= 4: each value
// broadcast to a register and written to its run of n in blocks of 4, the
// last block overlapping (set) or the n%4 last lanes one at a time (add).
TEXT ·broadcastLastAVX2(SB), NOSPLIT, $0-57
	MOVQ    dst_base+0(FP), DI
	MOVQ    src_base+24(FP), SI
	MOVQ    src_len+32(FP), R8
	MOVQ    n+48(FP), R9
	LEAQ    (R9*8), R10       // bytes per run
	MOVQ    R9, R11
	ANDQ    $-4, R11          // lanes in blocks of 4
	LEAQ    -32(R10), R12     // offset of the last block
	MOVBLZX add+56(FP), AX
	TESTQ   AX, AX
	JNZ     blAdd

blSet:
	TESTQ        R8, R8
	JZ           blDone
	VBROADCASTSD (SI), Y0
	XORQ         CX, CX

blSetV:
	VMOVUPD Y0, (DI)(CX*8)
	ADDQ    $4, CX
	CMPQ    CX, R11
	JLT     blSetV
	VMOVUPD Y0, (DI)(R12*1)
	ADDQ    $8, SI
	ADDQ    R10, DI
	DECQ    R8
	JMP     blSet

blAdd:
	TESTQ        R8, R8
	JZ           blDone
	VBROADCASTSD (SI), Y0
	XORQ         CX, CX

blAddV:
	VADDPD  (DI)(CX*8), Y0, Y1
	VMOVUPD Y1, (DI)(CX*8)
	ADDQ    $4, CX
	CMPQ    CX, R11
	JLT     blAddV

blAddS:
	CMPQ   CX, R9
	JGE    blAddNext
	VADDSD (DI)(CX*8), X0, X1
	VMOVSD X1, (DI)(CX*8)
	INCQ   CX
	JMP    blAddS

blAddNext:
	ADDQ $8, SI
	ADDQ R10, DI
	DECQ R8
	JMP  blAdd

blDone:
	VZEROUPPER
	RET

// func ntCopyAVX2(dst, src []float64)
// dst = src with non-temporal stores (no read of dst's lines into the
// cache): scalar moves until dst is 32-byte aligned, then 16 elements per
// iteration, the tail scalar, and SFENCE so that the stores are visible
// before the caller signals another goroutine.
TEXT ·ntCopyAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	XORQ AX, AX

ntHead:
	CMPQ  AX, CX
	JGE   ntDone
	LEAQ  (DI)(AX*8), DX
	TESTQ $31, DX
	JZ    ntBody
	MOVSD (SI)(AX*8), X0
	MOVSD X0, (DI)(AX*8)
	INCQ  AX
	JMP   ntHead

ntBody:
	MOVQ CX, BX
	SUBQ AX, BX
	ANDQ $-16, BX
	ADDQ AX, BX   // end of the 16-element blocks

ntLoop:
	CMPQ     AX, BX
	JGE      ntTail
	VMOVUPD  (SI)(AX*8), Y0
	VMOVUPD  32(SI)(AX*8), Y1
	VMOVUPD  64(SI)(AX*8), Y2
	VMOVUPD  96(SI)(AX*8), Y3
	VMOVNTPD Y0, (DI)(AX*8)
	VMOVNTPD Y1, 32(DI)(AX*8)
	VMOVNTPD Y2, 64(DI)(AX*8)
	VMOVNTPD Y3, 96(DI)(AX*8)
	ADDQ     $16, AX
	JMP      ntLoop

ntTail:
	CMPQ  AX, CX
	JGE   ntDone
	MOVSD (SI)(AX*8), X0
	MOVSD X0, (DI)(AX*8)
	INCQ  AX
	JMP   ntTail

ntDone:
	SFENCE
	VZEROUPPER
	RET
