#include "measure/machine_share.h"

namespace temper::measure {

void MachineShare::run(bool exclusive, const std::function<void()>& work) {
  {
    std::unique_lock lock(mutex_);
    if (exclusive) {
      ++exclusive_waiting_;
      changed_.wait(lock, [&] { return !exclusive_running_ && shared_running_ == 0; });
      --exclusive_waiting_;
      exclusive_running_ = true;
    } else {
      changed_.wait(lock, [&] { return !exclusive_running_ && exclusive_waiting_ == 0; });
      ++shared_running_;
    }
  }
  struct EndTurn {
    MachineShare& share;
    bool exclusive;
    ~EndTurn() {
      std::lock_guard lock(share.mutex_);
      if (exclusive) {
        share.exclusive_running_ = false;
      } else {
        --share.shared_running_;
      }
      share.changed_.notify_all();
    }
  } end_turn{*this, exclusive};
  work();
}

}  // namespace temper::measure
