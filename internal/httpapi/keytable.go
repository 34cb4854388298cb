package httpapi

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
)

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// objectKind is how the keys of one JSON object are matched.
type objectKind int

const (
	// structKeys: encoding/json matches the keys to fields, ignoring case.
	structKeys objectKind = iota
	// mapKeys: keys are data, compared exactly.
	mapKeys
	// ownKeys: the type decodes itself; its keys are its own business.
	ownKeys
)

// keyTable is what CheckKeys needs to know of one Go type, worked out by
// reflection once per type (keyTableOf) and shared by every request after.
type keyTable struct {
	// object is how a JSON object decoded into the type is matched.
	object objectKind
	// fields are a struct's fields by their exact JSON name (nil for any
	// other type: a key is then matched against no field).
	fields map[string]keyField
	// folded names a field by its folded name (foldKey), for the key sent
	// in another letter case.
	folded map[string]string
	// mapElem is the type of a map's values.
	mapElem reflect.Type
	// arrayElem is the type of a slice's or array's elements, for a JSON
	// array decoded into the type (nil: unknown).
	arrayElem reflect.Type
}

// keyField is one field of a struct as encoding/json sees it.
type keyField struct {
	t    reflect.Type
	fold string // foldKey of its name
}

// keyTables caches keyTableOf by reflect.Type.
var keyTables sync.Map // reflect.Type → *keyTable

// keyTableOf returns t's table, from the cache after the first call. t is
// not a pointer and not nil.
func keyTableOf(t reflect.Type) *keyTable {
	if kt, ok := keyTables.Load(t); ok {
		return kt.(*keyTable)
	}
	kt, _ := keyTables.LoadOrStore(t, newKeyTable(t))
	return kt.(*keyTable)
}

func newKeyTable(t reflect.Type) *keyTable {
	kt := &keyTable{}
	own := custom(t)
	if (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && !own {
		kt.arrayElem = t.Elem()
	}
	switch {
	case t == rawMessageType:
		// Decoded later into a struct (an element of an alerts batch):
		// merged keys are refused all the same, as for an unknown type.
	case own:
		kt.object = ownKeys
	case t.Kind() == reflect.Struct:
		names := structFields(t)
		kt.fields = make(map[string]keyField, len(names))
		kt.folded = make(map[string]string, len(names))
		sorted := make([]string, 0, len(names))
		for name := range names {
			sorted = append(sorted, name)
		}
		sort.Strings(sorted) // of two names folding alike, one chosen always
		for _, name := range sorted {
			fold := foldKey(name)
			kt.fields[name] = keyField{t: names[name], fold: fold}
			if _, taken := kt.folded[fold]; !taken {
				kt.folded[fold] = name
			}
		}
	case t.Kind() == reflect.Map:
		kt.object, kt.mapElem = mapKeys, t.Elem()
	case t.Kind() == reflect.Interface:
		kt.object = mapKeys // decoded into map[string]any: keys are data
	}
	return kt
}

// custom reports a type that decodes itself.
func custom(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t != rawMessageType && (t.Implements(unmarshalerType) || p.Implements(unmarshalerType) ||
		t.Implements(textUnmarshaler) || p.Implements(textUnmarshaler))
}

// structFields lists the JSON names of t's fields as encoding/json sees
// them: the tag's name or the Go name, embedded structs flattened, "-" and
// unexported fields left out.
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var add func(t reflect.Type, depth int)
	add = func(t reflect.Type, depth int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct && depth < 8 {
					add(et, depth+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, taken := out[name]; !taken {
				out[name] = ft
			}
		}
	}
	add(t, 0)
	return out
}
