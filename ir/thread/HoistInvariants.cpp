#include "ir/thread/HoistInvariants.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <unordered_map>

#include "ir/thread/Builder.h"
#include "ir/thread/Walk.h"

namespace tyl::tir {
namespace {

bool isLeaf(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntConst:
    case ExprKind::FloatConst:
    case ExprKind::VarRef:
    case ExprKind::ParamRef:
    case ExprKind::SpecialReg:
    case ExprKind::Elem: return true;
    default: return false;
  }
}

// A program point: before statement `index` of block `scope`.
struct Point {
  int scope = -1;
  size_t index = 0;
  uint64_t key() const { return (static_cast<uint64_t>(scope) << 32) | index; }
};

// Uses of a value further apart than this many statements (in the block holding both) get
// their own definitions: sharing one would keep it live, and in a register, in between.
constexpr size_t kMaxReuseDistance = 16;

class Hoister {
 public:
  explicit Hoister(Kernel& k) : k_(k) {}

  void run() {
    scopes_.push_back(Scope{&k_.body, -1, 0, 0});
    scopeOf_[&k_.body] = 0;
    number(k_.body);
    forEachExpr(k_.body, [&](ExprRef& e, Block& b, size_t i) { count(e, -1, Point{scopeOf_.at(&b), i}); });
    placeDefinitions();
    forEachExpr(k_.body, [&](ExprRef& e, Block& b, size_t i) { e = rewrite(e, Point{scopeOf_.at(&b), i}); });
    // Innermost blocks first: rebuilding a block moves the blocks nested in it.
    for (auto sc = scopes_.rbegin(); sc != scopes_.rend(); ++sc) {
      if (sc->defs.empty()) continue;
      std::stable_sort(sc->defs.begin(), sc->defs.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      Block merged;
      merged.reserve(sc->block->size() + sc->defs.size());
      size_t d = 0;
      for (size_t i = 0; i < sc->block->size(); ++i) {
        for (; d < sc->defs.size() && sc->defs[d].first == i; ++d) merged.push_back(std::move(sc->defs[d].second));
        merged.push_back(std::move((*sc->block)[i]));
      }
      *sc->block = std::move(merged);
    }
  }

 private:
  // Gives every nested block a scope and every statement its place in program order.
  void number(Block& b) {
    int scope = scopeOf_.at(&b);
    for (size_t i = 0; i < b.size(); ++i) {
      scopes_[scope].order.push_back(statements_++);
      auto nested = [&](Block& inner) {
        scopeOf_[&inner] = static_cast<int>(scopes_.size());
        scopes_.push_back(Scope{&inner, scope, scopes_[scope].depth + 1, i});
        number(inner);
      };
      if (auto* n = std::get_if<If>(&b[i].node)) {
        nested(n->then);
        nested(n->otherwise);
      } else if (auto* f = std::get_if<For>(&b[i].node)) {
        nested(f->body);
      }
    }
  }

  struct Info {
    ExprRef expr;         // keeps the node alive while its address is a key
    int id = -1;          // structural identity: equal ids, equal trees
    bool invariant = false;
  };

  // Number, invariance and hoistability of a node (memoized by address).
  const Info& info(const ExprRef& e) {
    auto it = infos_.find(e.get());
    if (it != infos_.end()) return it->second;
    std::array<int, 3> args{-1, -1, -1};
    bool inv = true;
    for (int i = 0; i < 3; ++i) {
      if (!e->args[i]) continue;
      const Info& a = info(e->args[i]);
      args[i] = a.id;
      inv = inv && a.invariant;
    }
    switch (e->kind) {
      case ExprKind::VarRef:
      case ExprKind::Elem: inv = false; break;
      default: inv = inv && speculatable(*e); break;
    }
    uint64_t fbits = 0;
    std::memcpy(&fbits, &e->real, sizeof fbits);
    Key key{static_cast<int>(e->kind), static_cast<int>(e->type), e->value, e->id, e->index, static_cast<int>(e->special), fbits,
            static_cast<int>(e->bin), static_cast<int>(e->un), args[0], args[1], args[2]};
    auto [pos, fresh] = ids_.try_emplace(key, static_cast<int>(ids_.size()));
    if (fresh) nodes_.push_back(Node{});
    return infos_.emplace(e.get(), Info{e, pos->second, inv}).first->second;
  }

  // A value worth its own variable: computed, not a leaf, and held in a 32- or 64-bit
  // register (16-bit scalars stay inside the expressions that convert them).
  bool candidate(const ExprRef& e) {
    return !isLeaf(*e) && info(e).invariant && e->type != Type::F16 && e->type != Type::BF16;
  }

  // Counts uses: each distinct invariant node once per distinct parent, and whether it
  // appears where its parent is not invariant (then it is the largest invariant part).
  // `parent` is the invariant node using `e`, or -1 for a use in a statement at `at`.
  void count(const ExprRef& e, int parent, Point at) {
    if (candidate(e)) {
      int id = info(e).id;
      Node& n = nodes_[id];
      if (parent < 0) {
        n.outermost = true;
        n.uses.push_back(at);
      } else {
        n.parents.push_back(parent);
      }
      if (n.refs++ > 0) return;
      for (const ExprRef& a : e->args)
        if (a) count(a, id, at);
      return;
    }
    for (const ExprRef& a : e->args)
      if (a) count(a, -1, at);
  }

  // A value is defined just before the first statement, in the innermost block holding
  // all its uses, that uses it: it is computed no more often, no earlier and under no
  // fewer conditions than its uses agree on (CSE that does not move work out of loops or
  // branches on its own). Uses far apart get separate definitions. A node's parents have
  // larger ids than the node, so one descending sweep places every parent first; a
  // parent's definitions are uses of its operands.
  void placeDefinitions() {
    for (size_t id = nodes_.size(); id-- > 0;) {
      Node& n = nodes_[id];
      for (int p : n.parents)
        for (const Point& at : nodes_[p].evalPoints()) n.uses.push_back(at);
      std::sort(n.uses.begin(), n.uses.end(),
                [&](const Point& a, const Point& b) { return orderOf(a) < orderOf(b); });
      n.uses.erase(std::unique(n.uses.begin(), n.uses.end(),
                               [](const Point& a, const Point& b) { return a.key() == b.key(); }),
                   n.uses.end());
      n.named = n.outermost || n.refs > 1;
      if (!n.named) continue;
      Point last;
      for (const Point& at : n.uses) {
        if (!n.clusters.empty()) {
          Point m = merge(n.clusters.back().def, at);
          if (lift(at, m.scope).index - lift(last, m.scope).index <= kMaxReuseDistance) {
            n.clusters.back().def = m;
            n.clusterOf[at.key()] = n.clusters.size() - 1;
            last = at;
            continue;
          }
        }
        n.clusters.push_back(Cluster{at, std::nullopt});
        n.clusterOf[at.key()] = n.clusters.size() - 1;
        last = at;
      }
    }
  }

  int64_t orderOf(const Point& p) const { return scopes_[p.scope].order[p.index]; }

  // `p` seen from the enclosing block `scope`: the statement there that holds it.
  Point lift(Point p, int scope) const {
    while (p.scope != scope) {
      p.index = scopes_[p.scope].indexInParent;
      p.scope = scopes_[p.scope].parent;
    }
    return p;
  }

  // The latest point before both `a` and `b`, in a block holding both.
  Point merge(Point a, Point b) const {
    if (a.scope < 0) return b;
    if (b.scope < 0) return a;
    auto up = [&](Point& p) {
      p.index = scopes_[p.scope].indexInParent;
      p.scope = scopes_[p.scope].parent;
    };
    while (scopes_[a.scope].depth > scopes_[b.scope].depth) up(a);
    while (scopes_[b.scope].depth > scopes_[a.scope].depth) up(b);
    while (a.scope != b.scope) {
      up(a);
      up(b);
    }
    return Point{a.scope, std::min(a.index, b.index)};
  }

  // `e` as evaluated at `at` (a statement using it, or the definition of a value using it).
  ExprRef rewrite(const ExprRef& e, Point at) {
    if (isLeaf(*e)) return e;
    const Info& in = info(e);
    Cluster* cluster = nullptr;
    if (candidate(e) && nodes_[in.id].named) {
      cluster = &nodes_[in.id].clusters.at(nodes_[in.id].clusterOf.at(at.key()));
      if (cluster->var) return varRef(k_, *cluster->var);
      at = cluster->def;
    }
    Expr copy = *e;
    bool changed = false;
    for (ExprRef& a : copy.args) {
      if (!a) continue;
      ExprRef r = rewrite(a, at);
      changed = changed || r != a;
      a = std::move(r);
    }
    ExprRef value = changed ? std::make_shared<const Expr>(std::move(copy)) : e;
    if (!cluster) return value;
    uint32_t var = addVar(k_, fmt::format("t{}", vars_++), e->type);
    k_.vars[var].single = true;
    scopes_[at.scope].defs.emplace_back(at.index, Stmt{SourceRange{}, Assign{Reg::var(var), value}});
    cluster->var = var;
    return varRef(k_, var);
  }

  using Key = std::tuple<int, int, int64_t, uint32_t, int64_t, int, uint64_t, int, int, int, int, int>;
  struct KeyHash {
    size_t operator()(const Key& k) const {
      size_t h = 0;
      std::apply([&](const auto&... field) { ((h = h * 1000003u ^ std::hash<std::decay_t<decltype(field)>>{}(field)), ...); },
                 k);
      return h;
    }
  };
  struct Cluster {
    Point def;  // where this definition goes
    std::optional<uint32_t> var;
  };
  struct Node {
    int refs = 0;              // distinct parents, plus one if used by statements
    bool outermost = false;    // used by a statement, not only inside other invariants
    bool named = false;        // gets variables (else it is inlined where it is used)
    std::vector<int> parents;  // invariant nodes using this one (each once)
    std::vector<Point> uses;   // where it is evaluated, in program order
    std::vector<Cluster> clusters;
    std::unordered_map<uint64_t, size_t> clusterOf;  // use (Point::key) -> its definition
    // Where the value itself is computed: its definitions, or inline at its uses.
    std::vector<Point> evalPoints() const {
      if (!named) return uses;
      std::vector<Point> out;
      for (const Cluster& c : clusters) out.push_back(c.def);
      return out;
    }
  };
  struct Scope {
    Block* block;
    int parent;
    int depth;
    size_t indexInParent;  // the statement of the parent block holding this one
    std::vector<int64_t> order = {};  // of each statement, its place in program order
    std::vector<std::pair<size_t, Stmt>> defs = {};  // definitions, before statement .first
  };

  Kernel& k_;
  std::unordered_map<const Expr*, Info> infos_;
  std::unordered_map<Key, int, KeyHash> ids_;
  std::vector<Node> nodes_;  // by id
  std::vector<Scope> scopes_;
  std::unordered_map<const Block*, int> scopeOf_;
  int64_t statements_ = 0;
  int vars_ = 0;
};

}  // namespace

void hoistInvariants(Kernel& k) { Hoister(k).run(); }

void hoistInvariants(Module& m) {
  for (Kernel& k : m.kernels) hoistInvariants(k);
}

}  // namespace tyl::tir
