package lifecycle

import (
	"reflect"
	"testing"
)

// Clone shares no slice, map or pointer with the original, for every such
// field of Server and its Spec (a field added later without its copy fails
// here): the store keeps decoded specs and hands out read-only servers, so
// a clone changed in place must not change them.
func TestCloneSharesNothing(t *testing.T) {
	var s Server
	fill(reflect.ValueOf(&s).Elem())
	c := s.Clone()
	if !reflect.DeepEqual(&s, c) {
		t.Fatal("the clone differs from the original")
	}
	shared(t, "Server", reflect.ValueOf(s), reflect.ValueOf(*c))
}

// fill gives every slice, map and pointer reachable in the struct v one
// element (or a value), so that sharing would show.
func fill(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.Struct:
			fill(f)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Map:
			m := reflect.MakeMap(f.Type())
			m.SetMapIndex(reflect.New(f.Type().Key()).Elem(), reflect.New(f.Type().Elem()).Elem())
			f.Set(m)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		}
	}
}

func shared(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	for i := range a.NumField() {
		if !a.Type().Field(i).IsExported() {
			continue
		}
		name := path + "." + a.Type().Field(i).Name
		fa, fb := a.Field(i), b.Field(i)
		switch fa.Kind() {
		case reflect.Struct:
			shared(t, name, fa, fb)
		case reflect.Slice, reflect.Map, reflect.Pointer:
			if !fa.IsNil() && fa.Pointer() == fb.Pointer() {
				t.Errorf("%s is shared by the clone", name)
			}
		}
	}
}
