// Command bench measures Mink against its physical limits and against a
// copying pipeline, and writes bench/RESULTS.md: the machine, the commit,
// each figure's median over several runs, its reference and the ratio.
//
//	make bench                      # every scenario, RESULTS.md
//	go run ./bench -run indexing    # one scenario (regexp on names)
//
// Scenarios live in this directory, one file each, and register
// themselves from init (see Scenario).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"syscall"
	"time"
)

func main() {
	run := flag.String("run", "", "regexp selecting scenarios by name (default all)")
	runs := flag.Int("runs", 5, "runs per figure; the median is reported")
	quick := flag.Bool("quick", false, "smaller inputs, for developing a scenario")
	out := flag.String("out", "bench/RESULTS.md", "where to write the results (- for stdout)")
	list := flag.Bool("list", false, "list the scenarios and exit")
	flag.Parse()
	log.SetFlags(log.Ltime)
	// Indexing, then loads (freshness, lineage), serving, scan, statistics, scale, memory;
	// not the files' init order.
	order := []string{"indexing", "freshness", "lineage", "serving", "scan", "statistics", "scale", "memory", "idle"}
	slices.SortStableFunc(scenarios, func(a, b Scenario) int {
		ia, ib := slices.Index(order, a.Name), slices.Index(order, b.Name)
		if ia < 0 {
			ia = len(order)
		}
		if ib < 0 {
			ib = len(order)
		}
		return ia - ib
	})
	if *list {
		for _, s := range scenarios {
			fmt.Printf("%-12s %s\n", s.Name, s.Title)
		}
		return
	}
	re, err := regexp.Compile(*run)
	if err != nil {
		log.Fatalf("bench: -run: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer runCleanups()

	var done []result
	failed := false
	for _, s := range scenarios {
		if !re.MatchString(s.Name) {
			continue
		}
		h := &H{Runs: *runs, Quick: *quick, scenario: s.Name}
		log.Printf("%s: start (%d runs)", s.Name, *runs)
		start := time.Now()
		err := s.Run(ctx, h)
		r := result{s: s, h: h, took: time.Since(start)}
		switch {
		case errors.Is(err, errSkip):
			log.Printf("%s: skipped: %s", s.Name, h.skipped)
		case err != nil:
			log.Printf("%s: FAILED: %v", s.Name, err)
			r.err = err
			failed = true
		default:
			log.Printf("%s: done in %v", s.Name, r.took.Round(time.Second))
		}
		done = append(done, r)
		if ctx.Err() != nil {
			break
		}
	}
	if len(done) == 0 {
		log.Fatalf("bench: no scenario matches %q", *run)
	}
	md := render(done, *runs, *quick)
	if *out == "-" {
		fmt.Print(md)
	} else if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
		log.Fatalf("bench: %v", err)
	} else {
		log.Printf("wrote %s", *out)
	}
	if n := skipped.Load(); n > 0 {
		log.Printf("%d scenario(s) SKIPPED: shared data not found (set MINK_DATA_DIR)", n)
	}
	if failed {
		runCleanups()
		os.Exit(1)
	}
}
