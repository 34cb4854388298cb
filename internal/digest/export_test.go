package digest

// Exported for the tests of package digest_test.
var (
	CleanTitle   = cleanTitle
	CleanSummary = cleanSummary
	Linkable     = linkable
	Shorten      = shorten
)
