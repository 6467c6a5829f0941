package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

type result struct {
	s    Scenario
	h    *H
	took time.Duration
	err  error
}

// render writes RESULTS.md.
func render(rs []result, runs int, quick bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Mink benchmark results\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (`go run ./bench`); each figure is the median of %d runs", runs)
	if quick {
		b.WriteString(" (**-quick: small inputs, not comparable**)")
	}
	b.WriteString(".\n\n")
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| date | %s |\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "| commit | %s |\n", commit())
	for _, kv := range machine() {
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], kv[1])
	}
	b.WriteString("\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "## %s\n\n", r.s.Title)
		if r.s.About != "" {
			fmt.Fprintf(&b, "%s\n\n", oneLine(r.s.About))
		}
		if r.h.skipped != "" {
			fmt.Fprintf(&b, "Skipped: %s\n\n", r.h.skipped)
			continue
		}
		if r.err != nil {
			fmt.Fprintf(&b, "**Failed**: `%s`\n\n", oneLine(r.err.Error()))
		}
		if len(r.h.figures) > 0 {
			b.WriteString("| figure | median | unit | samples (one per run) | reference | ratio | target | met |\n")
			b.WriteString("|---|---:|---|---|---|---:|---|---|\n")
			for _, f := range r.h.figures {
				med := median(f.samples)
				ref, ratio := "", ""
				var rv float64
				if f.Ref != "" {
					for _, g := range r.h.figures {
						if g.Name == f.Ref && len(g.samples) > 0 {
							ref = g.Name
							if m := median(g.samples); m != 0 {
								rv = med / m
								ratio = strconv.FormatFloat(rv, 'g', 3, 64) + "×"
							}
						}
					}
				}
				target, met := targetOf(f, med, rv, ratio != "")
				name := f.Name
				if f.Note != "" {
					name += " <br><sub>" + f.Note + "</sub>"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
					name, num(med), f.Unit, samples(f.samples), ref, ratio, target, met)
			}
			b.WriteString("\n")
		}
		for _, n := range r.h.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		fmt.Fprintf(&b, "\n_Scenario `%s` took %v._\n\n", r.s.Name, r.took.Round(time.Second))
	}
	return b.String()
}

func targetOf(f *Figure, med, ratio float64, haveRatio bool) (string, string) {
	var parts []string
	ok := true
	if f.Min != 0 {
		parts = append(parts, "≥ "+num(f.Min)+" "+f.Unit)
		ok = ok && med >= f.Min
	}
	if f.Max != 0 {
		parts = append(parts, "≤ "+num(f.Max)+" "+f.Unit)
		ok = ok && med <= f.Max
	}
	if f.MinRatio != 0 {
		parts = append(parts, fmt.Sprintf("≥ %.2f× reference", f.MinRatio))
		ok = ok && haveRatio && ratio >= f.MinRatio
	}
	if f.MaxRatio != 0 {
		parts = append(parts, fmt.Sprintf("≤ %.2f× reference", f.MaxRatio))
		ok = ok && haveRatio && ratio <= f.MaxRatio
	}
	if len(parts) == 0 {
		return "", ""
	}
	if len(f.samples) == 0 {
		return strings.Join(parts, ", "), "no data"
	}
	if ok {
		return strings.Join(parts, ", "), "yes"
	}
	return strings.Join(parts, ", "), "**no**"
}

func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1000 || v <= -1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10 || v <= -10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func samples(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = num(x)
	}
	return strings.Join(s, ", ")
}

func commit() string {
	out, err := exec.Command("git", "-C", repoRoot(), "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", repoRoot(), "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}

func machine() [][2]string {
	var kv [][2]string
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				kv = append(kv, [2]string{"cpu", strings.TrimSpace(strings.SplitN(l, ":", 2)[1])})
				break
			}
		}
	}
	kv = append(kv, [2]string{"cores (GOMAXPROCS)", strconv.Itoa(runtime.GOMAXPROCS(0))})
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				f := strings.Fields(l)
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					kv = append(kv, [2]string{"memory", fmt.Sprintf("%.1f GiB", kb/1024/1024)})
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kv = append(kv, [2]string{"kernel", strings.TrimSpace(string(b))})
	}
	kv = append(kv, [2]string{"go", runtime.Version()})
	return kv
}
