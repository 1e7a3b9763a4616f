package main

import (
	"fmt"
	"io"
	"time"

	"github.com/dpsynth/synth/solvers"
)

// progressBar draws the solver's progress on a terminal: iteration, the
// solver's private objective estimate and the time left. It is silent when
// stderr is not a terminal.
type progressBar struct {
	w     io.Writer
	last  time.Time
	drawn bool
}

func newProgress(e *env, quiet bool) *progressBar {
	if !e.tty || quiet {
		return nil
	}
	return &progressBar{w: e.stderr}
}

// update is a solvers.Progress callback (nil-safe).
func (p *progressBar) update(pr solvers.Progress) {
	if p == nil || time.Since(p.last) < 100*time.Millisecond && pr.Iter != pr.Total {
		return
	}
	p.last = time.Now()
	line := fmt.Sprintf("solving: iteration %d", pr.Iter)
	if pr.Total > 0 {
		const width = 24
		done := min(width*pr.Iter/pr.Total, width)
		bar := make([]byte, width)
		for i := range bar {
			bar[i] = ' '
			if i < done {
				bar[i] = '='
			}
		}
		line = fmt.Sprintf("solving [%s] %d/%d", bar, pr.Iter, pr.Total)
		if pr.Iter > 0 && pr.Elapsed > 0 {
			left := time.Duration(float64(pr.Elapsed) * float64(pr.Total-pr.Iter) / float64(pr.Iter))
			line += fmt.Sprintf("  ETA %s", left.Round(time.Second))
		}
	}
	if pr.Objective == pr.Objective && pr.Objective != 0 {
		line += fmt.Sprintf("  objective %.4g", pr.Objective)
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

// done ends the progress line.
func (p *progressBar) done() {
	if p != nil && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
