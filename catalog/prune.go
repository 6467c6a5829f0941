package catalog

import (
	"bytes"
	"errors"
	"math"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/minkhq/mink/datafile"
)

// The rules of inclusive metrics evaluation: does a data file hold any row
// that may match a filter, judged from its column statistics alone? They
// are iceberg-go v0.7's inclusiveMetricsEval (table/evaluators.go), which
// the package keeps unexported, itself Java's InclusiveMetricsEvaluator:
// the same answer for every predicate, so that a plan served here lists
// exactly the files an engine's own planning over the manifests keeps.
// Mink's columns hold no variant or geometry, so those predicates (and
// transformed terms) always might match.

// inPredicateLimit is iceberg-go's: an IN of more values is not evaluated.
const inPredicateLimit = 200

// pruner decides, for one bound filter, which data files may hold a
// matching row.
type pruner struct {
	// expr is the filter with NOT rewritten away, bound to the schema.
	expr iceberg.BooleanExpression
}

// newPruner binds filter (nil: every file) to schema.
func newPruner(schema *iceberg.Schema, filter iceberg.BooleanExpression, caseSensitive bool) (*pruner, error) {
	if filter == nil {
		filter = iceberg.AlwaysTrue{}
	}
	rewritten, err := iceberg.RewriteNotExpr(filter)
	if err != nil {
		return nil, err
	}
	bound, err := iceberg.BindExpr(schema, rewritten, caseSensitive)
	if err != nil {
		return nil, err
	}
	return &pruner{expr: bound}, nil
}

// mightMatch reports whether a file with statistics st may hold a row the
// filter matches. Empty files never match (iceberg-go plans with
// includeEmptyFiles false).
func (p *pruner) mightMatch(st *datafile.Stats) (bool, error) {
	if st.RecordCount == 0 {
		return false, nil
	}
	ok, err := iceberg.VisitExprEvaluator(p.expr, &metricsEval{st: st})
	if errors.Is(err, iceberg.ErrInvalidFixedLength) {
		return true, nil
	}
	return ok, err
}

// metricsEval evaluates a bound expression over one file's statistics; it
// implements iceberg.BoundBooleanExprVisitor[bool].
type metricsEval struct {
	st *datafile.Stats
}

func (m *metricsEval) VisitTrue() bool         { return true }
func (m *metricsEval) VisitFalse() bool        { return false }
func (m *metricsEval) VisitNot(bool) bool      { panic("catalog: NOT should have been rewritten") }
func (m *metricsEval) VisitAnd(l, r bool) bool { return l && r }
func (m *metricsEval) VisitOr(l, r bool) bool  { return l || r }
func (m *metricsEval) VisitUnbound(iceberg.UnboundPredicate) bool {
	panic("catalog: predicate is not bound")
}

func (m *metricsEval) VisitBound(pred iceberg.BoundPredicate) bool {
	if _, ok := pred.Term().(iceberg.BoundReference); !ok {
		return true // a transform or variant extract: no column bounds to judge by
	}
	if pred.Op() == iceberg.OpBBoxIntersects || pred.Op() == iceberg.OpBBoxNotIntersects {
		return true
	}
	return iceberg.VisitBoundPredicate(pred, m)
}

func (m *metricsEval) containsNullsOnly(id int) bool {
	v, ok1 := m.st.ValueCounts[id]
	n, ok2 := m.st.NullValueCounts[id]
	return ok1 && ok2 && v == n
}

func (m *metricsEval) containsNaNsOnly(id int) bool {
	nan, ok1 := m.st.NaNValueCounts[id]
	v, ok2 := m.st.ValueCounts[id]
	return ok1 && ok2 && nan == v
}

// bound decodes the lower (or upper) bound of t's column.
func (m *metricsEval) bound(t iceberg.BoundTerm, upper bool) (iceberg.Literal, bool) {
	field := t.Ref().Field()
	bounds := m.st.LowerBounds
	if upper {
		bounds = m.st.UpperBounds
	}
	raw, ok := bounds[field.ID]
	if !ok || raw == nil {
		return nil, false
	}
	lit, err := iceberg.LiteralFromBytes(field.Type, raw)
	if err != nil {
		panic(err) // as iceberg-go: a bound that does not decode is a corrupt file entry
	}
	return lit, true
}

func isNaN(l iceberg.Literal) bool {
	switch v := l.(type) {
	case iceberg.Float32Literal:
		return math.IsNaN(float64(v))
	case iceberg.Float64Literal:
		return math.IsNaN(float64(v))
	}
	return false
}

func (m *metricsEval) VisitIsNull(t iceberg.BoundTerm) bool {
	n, ok := m.st.NullValueCounts[t.Ref().Field().ID]
	return !ok || n != 0
}

func (m *metricsEval) VisitNotNull(t iceberg.BoundTerm) bool {
	return !m.containsNullsOnly(t.Ref().Field().ID)
}

func (m *metricsEval) VisitIsNan(t iceberg.BoundTerm) bool {
	id := t.Ref().Field().ID
	if n, ok := m.st.NaNValueCounts[id]; ok && n == 0 {
		return false
	}
	return !m.containsNullsOnly(id)
}

func (m *metricsEval) VisitNotNan(t iceberg.BoundTerm) bool {
	return !m.containsNaNsOnly(t.Ref().Field().ID)
}

// emptyOrNaN: a column of nulls or NaNs only holds no value an order
// comparison can match.
func (m *metricsEval) emptyOrNaN(t iceberg.BoundTerm) bool {
	id := t.Ref().Field().ID
	return m.containsNullsOnly(id) || m.containsNaNsOnly(id)
}

func (m *metricsEval) VisitLess(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	if m.emptyOrNaN(t) {
		return false
	}
	if lo, ok := m.bound(t, false); ok && !isNaN(lo) && compare(lo, lit) >= 0 {
		return false
	}
	return true
}

func (m *metricsEval) VisitLessEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	if m.emptyOrNaN(t) {
		return false
	}
	if lo, ok := m.bound(t, false); ok && !isNaN(lo) && compare(lo, lit) > 0 {
		return false
	}
	return true
}

func (m *metricsEval) VisitGreater(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	if m.emptyOrNaN(t) {
		return false
	}
	if hi, ok := m.bound(t, true); ok && compare(hi, lit) <= 0 && !isNaN(hi) {
		return false
	}
	return true
}

func (m *metricsEval) VisitGreaterEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	if m.emptyOrNaN(t) {
		return false
	}
	if hi, ok := m.bound(t, true); ok && compare(hi, lit) < 0 && !isNaN(hi) {
		return false
	}
	return true
}

func (m *metricsEval) VisitEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	if m.emptyOrNaN(t) {
		return false
	}
	if lo, ok := m.bound(t, false); ok {
		if isNaN(lo) {
			return true
		}
		if compare(lo, lit) > 0 {
			return false
		}
	}
	if hi, ok := m.bound(t, true); ok {
		if isNaN(hi) {
			return true
		}
		if compare(hi, lit) < 0 {
			return false
		}
	}
	return true
}

func (m *metricsEval) VisitNotEqual(iceberg.BoundTerm, iceberg.Literal) bool { return true }

func (m *metricsEval) VisitIn(t iceberg.BoundTerm, s iceberg.Set[iceberg.Literal]) bool {
	if m.emptyOrNaN(t) {
		return false
	}
	if s.Len() > inPredicateLimit {
		return true
	}
	values := s.Members()
	if lo, ok := m.bound(t, false); ok {
		if isNaN(lo) {
			return true
		}
		values = keep(values, func(v iceberg.Literal) bool { return compare(lo, v) <= 0 })
		if len(values) == 0 {
			return false
		}
	}
	if hi, ok := m.bound(t, true); ok {
		if isNaN(hi) {
			return true
		}
		values = keep(values, func(v iceberg.Literal) bool { return compare(hi, v) >= 0 })
		if len(values) == 0 {
			return false
		}
	}
	return true
}

// VisitNotIn: bounds need not be values of the column, so they cannot
// show that every value is in the set.
func (m *metricsEval) VisitNotIn(iceberg.BoundTerm, iceberg.Set[iceberg.Literal]) bool { return true }

func (m *metricsEval) VisitStartsWith(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	if m.containsNullsOnly(t.Ref().Field().ID) {
		return false
	}
	prefix := literalText(lit)
	if lo, ok := m.bound(t, false); ok {
		v := literalText(lo)
		if len(v) > len(prefix) {
			v = v[:len(prefix)]
		}
		if len(v) > 0 && v > prefix {
			return false
		}
	}
	if hi, ok := m.bound(t, true); ok {
		v := literalText(hi)
		if len(v) > len(prefix) {
			v = v[:len(prefix)]
		}
		if len(v) > 0 && v < prefix {
			return false
		}
	}
	return true
}

func (m *metricsEval) VisitNotStartsWith(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	id := t.Ref().Field().ID
	if m.st.NullValueCounts == nil {
		return true
	}
	if _, ok := m.st.NullValueCounts[id]; ok {
		return true // iceberg-go: a column that may hold nulls might match
	}
	lo, okLo := m.bound(t, false)
	hi, okHi := m.bound(t, true)
	if !okLo || !okHi {
		return true
	}
	prefix, l, u := literalText(lit), literalText(lo), literalText(hi)
	if len(l) < len(prefix) || l[:len(prefix)] != prefix {
		return true
	}
	if len(u) < len(prefix) || u[:len(prefix)] != prefix {
		return true
	}
	return false
}

// literalText is a string or binary literal's bytes as a string.
func literalText(l iceberg.Literal) string {
	switch v := l.(type) {
	case iceberg.TypedLiteral[string]:
		return v.Value()
	case iceberg.TypedLiteral[[]byte]:
		return string(v.Value())
	}
	return ""
}

func keep(vals []iceberg.Literal, f func(iceberg.Literal) bool) []iceberg.Literal {
	out := vals[:0:0]
	for _, v := range vals {
		if f(v) {
			out = append(out, v)
		}
	}
	return out
}

// compare orders two literals of the same type (binding casts the filter's
// literals to the column's type; bounds decode to it).
func compare(a, b iceberg.Literal) int {
	switch x := a.(type) {
	case iceberg.TypedLiteral[bool]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[int32]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[int64]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[float32]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[float64]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[iceberg.Date]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[iceberg.Time]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[iceberg.Timestamp]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[iceberg.TimestampNano]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[string]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[[]byte]:
		return bytes.Compare(x.Value(), b.(iceberg.TypedLiteral[[]byte]).Value())
	case iceberg.TypedLiteral[uuid.UUID]:
		return cmpTyped(x, b)
	case iceberg.TypedLiteral[iceberg.Decimal]:
		return cmpTyped(x, b)
	}
	panic(iceberg.ErrType)
}

func cmpTyped[T iceberg.LiteralType](a iceberg.TypedLiteral[T], b iceberg.Literal) int {
	return a.Comparator()(a.Value(), b.(iceberg.TypedLiteral[T]).Value())
}
