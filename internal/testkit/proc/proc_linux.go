package proc

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd's process when the test process
// ends, whatever way it ends (prctl PR_SET_PDEATHSIG).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
