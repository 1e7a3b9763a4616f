module github.com/dpsynth/synth

go 1.26

require github.com/spf13/pflag v1.0.10

require gonum.org/v1/gonum v0.17.0
