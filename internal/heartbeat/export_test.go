package heartbeat

// SetAfterCheck installs a hook called after every check of the loop. Call
// it before Start.
func (c *Checker) SetAfterCheck(f func(checkResult)) { c.afterCheck = f }

// SetBeforeHandover installs a hook called with each claimed notification
// right before the checker confirms its handover. Call it before Start.
func (c *Checker) SetBeforeHandover(f func(name, kind string)) {
	c.dl.beforeHandover = func(n notification) { f(n.Name, n.Kind) }
}
