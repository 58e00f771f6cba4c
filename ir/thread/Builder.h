// Constructors for thread IR expressions, folding constants and trivial identities so
// the generated code stays readable (x * 1, x + 0, constant arithmetic).
#pragma once

#include <functional>

#include "ir/thread/ThreadIR.h"

namespace tyl::tir {

ExprRef intConst(int64_t value, Type type = Type::I32);
ExprRef floatConst(double value, Type type = Type::F32);
ExprRef boolConst(bool value);
ExprRef varRef(const Kernel& k, uint32_t var);
ExprRef paramRef(const Kernel& k, int param);
ExprRef special(Special s);
ExprRef elemRef(const Kernel& k, uint32_t array, int64_t index);
ExprRef regRef(const Kernel& k, Reg reg);

ExprRef binary(BinOp op, ExprRef a, ExprRef b);
ExprRef unary(UnOp op, ExprRef a);
ExprRef select(ExprRef cond, ExprRef a, ExprRef b);
// Converts to `type`; a no-op when the type already matches.
ExprRef cast(Type type, ExprRef a);
// Whether `e` is an integer conversion that keeps every value: from a signed type to one at
// least as wide (`i64(k)`).
bool isWidening(const Expr& e);

inline ExprRef add(ExprRef a, ExprRef b) { return binary(BinOp::Add, std::move(a), std::move(b)); }
inline ExprRef sub(ExprRef a, ExprRef b) { return binary(BinOp::Sub, std::move(a), std::move(b)); }
inline ExprRef mul(ExprRef a, ExprRef b) { return binary(BinOp::Mul, std::move(a), std::move(b)); }
inline ExprRef lt(ExprRef a, ExprRef b) { return binary(BinOp::Lt, std::move(a), std::move(b)); }
inline ExprRef land(ExprRef a, ExprRef b) { return binary(BinOp::LAnd, std::move(a), std::move(b)); }

bool isIntConst(const ExprRef& e, int64_t* value = nullptr);
// Whether `e` reads the special register `s`.
bool mentionsSpecial(const ExprRef& e, Special s);
// The parameters `e` reads, each once, in the order of their first appearance.
std::vector<int> paramsRead(const ExprRef& e);
// Whether two expressions are the same tree (null only equals null).
bool sameExpr(const ExprRef& a, const ExprRef& b);
// Whether `e` is the constant true (null counts as true: no condition) or the constant false.
bool isTrue(const ExprRef& e);
bool isFalse(const ExprRef& e);
// Whether evaluating `e` (given its operands) can never fault or be undefined, so it may
// run where the original code would not have run it: no integer division or remainder by a
// run-time value (or by 0 or -1), no shift by a run-time or too large amount, no conversion of
// a float to an integer.
bool speculatable(const Expr& e);

// `e` rebuilt through the constructors above with each atom (a variable, parameter, special
// register or array element) replaced by value(atom), where that is not null: with constants
// for its atoms, an expression folds to a constant, computed as the hardware would.
ExprRef substitute(const ExprRef& e, const std::function<ExprRef(const Expr& atom)>& value);

// Adds entities to a kernel and returns their ids.
uint32_t addVar(Kernel& k, std::string name, Type type);
uint32_t addArray(Kernel& k, std::string name, Type elem, int64_t count);

}  // namespace tyl::tir
