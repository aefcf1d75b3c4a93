// ByOwnId: an ordered map of records keyed by a view of their own id, which tracks the records
// handed out mutable (for incremental snapshots of the write side's state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace cairn {

// Records keyed by a view of their own id (`kId`, never changed once stored): the key costs no
// second copy of the id, about 64 bytes a record for every task and job of history. An ordered
// map that offers only the insertions that key a record by itself.
//
// The tree's nodes hold the key and a pointer; each record is an allocation of its own. Why: a
// forked write-side snapshot (master/decision_snapshots.h) shares the writer's pages until the
// writer changes them, and an insertion rebalances the tree, writing to nodes at random. With the
// records inside the nodes (a task's node 384 bytes), those writes spread over every page of
// every task and job, and at 100k queued the writer copied 2.0 pages per submission while a
// snapshot's child lived (54 MiB); 64-byte nodes keep the tree on a sixth of the pages (with
// jemalloc, whose size classes put the nodes on pages of their own; glibc's malloc would lay
// each node between two records). Records stay where they are for their life, so pointers to
// them (JobRecord::tasks) stay valid.
//
// Iterators read like a std::map's (`it->first` is the id, `it->second` the record) except that
// `*it` is a pair of views made on the spot: `auto& e = *it` does not compile (use `const auto&`
// or `auto&&`); `auto e = *it` views the stored record rather than copying it; `&it->first` is
// not an address to keep; and on a mutable map `const auto& [id, record]` still gives a mutable
// record (read through std::as_const(map) for a const one).
//
// It tracks which records changed, for incremental write-side snapshots (master/
// decision_snapshots.h): once TakeChanged was first called, every record handed out mutable (by
// dereferencing a mutable iterator, by a mutable at(), Insert, FindOrMake or Changed) counts as
// changed, once, until the next TakeChanged.
// Conservative by construction: no record can be changed without being handed out mutable
// (pointers kept elsewhere, as JobRecord::tasks, are const), and one handed out and left as it
// was only makes a snapshot larger. Record::change_stamp holds the tracking's generation when it
// was last counted, so that counting is a compare, not a lookup.
template <typename Record, std::string Record::*kId>
class ByOwnId {
  using Tree = std::map<std::string_view, std::unique_ptr<Record>, std::less<>>;

 public:
  template <bool kConst>
  class Iterator {
    using TreeIterator =
        std::conditional_t<kConst, typename Tree::const_iterator, typename Tree::iterator>;
    using RecordRef = std::conditional_t<kConst, const Record&, Record&>;

   public:
    struct Entry {
      std::string_view first;
      RecordRef second;
    };
    struct Arrow {
      Entry entry;
      const Entry* operator->() const { return &entry; }
    };
    using value_type = Entry;
    using reference = Entry;
    using pointer = Arrow;
    using difference_type = std::ptrdiff_t;
    // Bidirectional though `reference` is a value (as vector<bool>'s): std::prev, std::next and
    // std::distance choose by the tag, and C++20's std::bidirectional_iterator holds.
    using iterator_category = std::bidirectional_iterator_tag;

    Iterator() = default;
    // `owner` counts the records a mutable iterator hands out; none for a const one.
    Iterator(TreeIterator at, ByOwnId* owner) : at_(at), owner_(owner) {}
    // iterator -> const_iterator, as a std::map's converts.
    template <bool kOther>
    requires(kConst && !kOther) Iterator(const Iterator<kOther>& other) : at_(other.at_) {}

    Entry operator*() const {
      if constexpr (!kConst) owner_->Count(*at_->second);
      return Entry{at_->first, *at_->second};
    }
    Arrow operator->() const { return Arrow{**this}; }
    Iterator& operator++() {
      ++at_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++at_;
      return before;
    }
    Iterator& operator--() {
      --at_;
      return *this;
    }
    Iterator operator--(int) {
      Iterator before = *this;
      --at_;
      return before;
    }
    template <bool kOther>
    bool operator==(const Iterator<kOther>& other) const {
      return at_ == other.at_;
    }

   private:
    template <bool>
    friend class Iterator;
    TreeIterator at_;
    ByOwnId* owner_ = nullptr;
  };
  using iterator = Iterator<false>;
  using const_iterator = Iterator<true>;

  iterator begin() { return Mutable(tree_.begin()); }
  iterator end() { return Mutable(tree_.end()); }
  const_iterator begin() const { return const_iterator(tree_.begin(), nullptr); }
  const_iterator end() const { return const_iterator(tree_.end(), nullptr); }
  size_t size() const { return tree_.size(); }
  bool empty() const { return tree_.empty(); }
  // Lookups by any string (std::less<> compares views).
  size_t count(std::string_view id) const { return tree_.count(id); }
  iterator find(std::string_view id) { return Mutable(tree_.find(id)); }
  const_iterator find(std::string_view id) const { return const_iterator(tree_.find(id), nullptr); }
  iterator lower_bound(std::string_view id) { return Mutable(tree_.lower_bound(id)); }
  const_iterator lower_bound(std::string_view id) const {
    return const_iterator(tree_.lower_bound(id), nullptr);
  }
  iterator upper_bound(std::string_view id) { return Mutable(tree_.upper_bound(id)); }
  const_iterator upper_bound(std::string_view id) const {
    return const_iterator(tree_.upper_bound(id), nullptr);
  }
  // std::out_of_range when there is none, as a std::map's.
  Record& at(std::string_view id) { return Count(*tree_.at(id)); }
  const Record& at(std::string_view id) const { return *tree_.at(id); }

  // Inserts `record` unless one with its id is stored already. Returns the stored record (the
  // one already there, if any) and whether it was inserted. Records inserted in id order (a
  // snapshot's) go in at the end without a search.
  std::pair<Record*, bool> Insert(Record record) {
    auto owned = std::make_unique<Record>(std::move(record));
    owned->change_stamp = 0;                    // a copy's stamp says nothing about this map
    const std::string_view id = (*owned).*kId;  // the key views the record's own id
    const size_t before = tree_.size();
    auto at = tree_.emplace_hint(tree_.end(), id, std::move(owned));
    return {&Count(*at->second), tree_.size() != before};
  }
  // The record with this id, made with only its id if there is none; and whether it was made.
  std::pair<Record*, bool> FindOrMake(std::string_view id) {
    if (auto it = tree_.find(id); it != tree_.end()) return {&Count(*it->second), false};
    Record made;
    made.*kId = id;
    return Insert(std::move(made));
  }

  // Replaces the record with `with`'s id by `with`, where it is (pointers to it stay right); the
  // key then views the new record's id (assigning a record over a stored one would leave the key
  // viewing the freed bytes of the old one's id). nullptr when none has that id.
  Record* Replace(Record with) {
    auto at = tree_.find(std::string_view(with.*kId));
    if (at == tree_.end()) return nullptr;
    Record& stored = *at->second;
    // The stored id's bytes go back into the stored record (the ids are equal), so that the key
    // usually still views them; when they did not (a string implementation that copied), the
    // node is keyed again.
    std::swap(stored.*kId, with.*kId);
    stored = std::move(with);
    if ((stored.*kId).data() != at->first.data()) {
      auto node = tree_.extract(at);
      node.key() = stored.*kId;
      tree_.insert(std::move(node));
    }
    return &Count(stored);
  }
  // A record of this map, reached through a const pointer, to change: counted as changed.
  Record& Changed(const Record& record) { return Count(const_cast<Record&>(record)); }
  // The records counted as changed since the last call (each once, in the order first counted);
  // counting starts anew. Counting is off until the first call: a state no snapshot is taken
  // of (a replay tool's, or a master's without write-side snapshots) keeps no list.
  std::vector<const Record*> TakeChanged() {
    counting_ = true;
    ++generation_;
    return std::exchange(changed_, {});
  }
  size_t changed_count() const { return changed_.size(); }
  // Whether every change since the last TakeChanged was counted: false for a map that never had
  // one (decoded, folded anew), whose changes no list holds.
  bool counting() const { return counting_; }

 private:
  iterator Mutable(typename Tree::iterator at) { return iterator(at, this); }
  Record& Count(Record& record) {
    if (counting_ && record.change_stamp != generation_) {
      record.change_stamp = generation_;
      changed_.push_back(&record);
    }
    return record;
  }

  Tree tree_;
  std::vector<const Record*> changed_;
  uint32_t generation_ = 1;  // a record's stamp 0: never counted
  bool counting_ = false;
};

}  // namespace cairn
