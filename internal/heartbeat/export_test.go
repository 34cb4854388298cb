package heartbeat

// SetAfterCheck installs a hook called after every check of the loop. Call
// it before Start.
func (c *Checker) SetAfterCheck(f func(CheckResult)) { c.afterCheck = f }
