//go:build !linux

package proc

import "os/exec"

// dieWithParent does nothing where the kernel offers no parent-death
// signal: nodes of a crashed test process must be killed by hand.
func dieWithParent(*exec.Cmd) {}
