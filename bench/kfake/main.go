// Command kfake runs franz-go's in-process Kafka broker (kfake) as a
// process of its own, so that a benchmark can measure its CPU apart from
// the nodes' (the idle scenario). It listens on 127.0.0.1:-port, creates
// -topics topics named <prefix>NNN of -partitions partitions each, prints
// "ready" and serves until SIGTERM or SIGINT.
//
//	go build -o kfake ./bench/kfake && ./kfake -port 9092 -topics 100 -partitions 4
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "listen port on 127.0.0.1 (required)")
	topics := flag.Int("topics", 0, "topics to create")
	partitions := flag.Int("partitions", 1, "partitions of each topic")
	prefix := flag.String("prefix", "t", "topic name prefix; names are <prefix>000, <prefix>001, …")
	flag.Parse()
	if *port <= 0 || *topics < 0 || *partitions <= 0 {
		log.Fatal("kfake: -port must be set, -topics ≥ 0, -partitions > 0")
	}
	names := make([]string, *topics)
	for i := range names {
		names[i] = fmt.Sprintf("%s%03d", *prefix, i)
	}
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.Ports(*port)}
	if len(names) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(*partitions), names...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		log.Fatalf("kfake: %v", err)
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	c.Close()
}
