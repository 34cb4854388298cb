package yamlstrict

import "strconv"

// Join returns the path of key inside the mapping at path: "feeds[0]" and
// "url" give "feeds[0].url"; the top level has the empty path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index returns the path of the i-th item (0-based) of the list at path:
// "feeds" and 2 give "feeds[2]".
func Index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
