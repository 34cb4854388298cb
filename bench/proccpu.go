package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's clock tick (USER_HZ) in which /proc reports a
// process's CPU time: 100 a second on Linux.
const clockTicks = 100

// procCPU is the CPU time (user and system) the process pid has used so
// far, from /proc/<pid>/stat; 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields after it are fixed.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// After the name: state(0) ... utime(11) stime(12).
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / clockTicks
}
