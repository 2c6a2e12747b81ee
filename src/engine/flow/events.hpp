#pragma once
// The clock and the pending events of a flow-engine run (internal).
//
// Events run in (time, push order) order. An event names a long-lived record by index (a rank's
// op, a flow, a transfer), never a closure. The run loop (Simulation::run) takes one instant at a
// time: its events, in order, including those they push for the same instant, and then asks the
// solver once. Owns the clock and the pending events (later instants in an EventQueue, the
// current instant's in two plain lists); relies on nothing.
#include <cstdint>
#include <vector>

#include "event_queue.hpp"
#include "lockstep/core/units.hpp"

namespace lockstep::flow_detail {

enum class EventKind : std::uint8_t { OpDone, FlowDone, Delivered, TransferStart };

struct Event {
  Time time;
  std::uint64_t seq;  // push order: decides the order within an instant
  std::uint32_t id;   // OpDone: rank; FlowDone: flow; Delivered, TransferStart: transfer
  std::uint32_t aux;  // OpDone: op index; FlowDone: the flow's generation when it was scheduled
  EventKind kind;
};

// Whether a runs after b.
struct EventLater {
  bool operator()(const Event& a, const Event& b) const {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
};

class Events {
 public:
  Events() { instant_.reserve(1024); }

  Time now() const { return now_; }
  // Events run so far (fast-forward's jumps skip some without running them).
  std::uint64_t processed() const { return processed_; }
  bool empty() const { return queue_.empty() && instant_.empty(); }
  // Whether the current instant has no events left to run.
  bool instant_over() const { return instant_.empty(); }
  // Whether every event left lies past Time's range (a transfer or a wait that overflowed it):
  // the run's end is infinite.
  bool only_infinite_left() const {
    return instant_.empty() && !queue_.empty() && queue_.next_time() == Time::infinite();
  }

  // An event for the current instant goes behind the instant's other events: those queued before
  // the instant began were pushed before it (smaller seq).
  void push(Time at, EventKind kind, std::uint32_t id, std::uint32_t aux = 0) {
    const Event e{at, seq_++, id, aux, kind};
    if (at == now_) {
      instant_.push_back(e);
    } else {
      queue_.push(e);
    }
  }

  // Runs the events of the next instant in order, with those they push for it, through
  // dispatch(event), which returns false to stop at once (the attempt is over). When events are
  // left at the current instant (the last solve finished flows at once), that instant goes on.
  template <class Dispatch>
  bool run_instant(Dispatch&& dispatch) {
    if (instant_.empty()) {
      now_ = queue_.next_time();
      queue_.take_next(current_);
      for (const Event& e : current_) {
        ++processed_;
        if (!dispatch(e)) return false;
      }
    }
    // By index and by value: dispatching may push onto instant_.
    for (std::size_t k = 0; k < instant_.size(); ++k) {
      ++processed_;
      if (!dispatch(Event{instant_[k]})) return false;
    }
    instant_.clear();
    return true;
  }

 private:
  friend class SteadyState;  // writes the pending events and moves them on (fast-forward)
  Time now_;
  std::uint64_t seq_ = 0;
  EventQueue<Event> queue_;     // later instants
  std::vector<Event> current_;  // the events of now_ queued before it began
  std::vector<Event> instant_;  // events of now_ pushed during it, in order
  std::uint64_t processed_ = 0;
};

}  // namespace lockstep::flow_detail
