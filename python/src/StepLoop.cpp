//===- StepLoop.cpp - The runtime's per-step loop in C++ ------------------===//

#include "StepLoop.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <utility>
#include <vector>

namespace nb = nanobind;

namespace mpmd::python {
namespace {

/// One step of the plan: a call of `callable` on env values `inputs` then
/// `extra` (constants), its results stored at `outputs`; or a transfer,
/// `callable(env[inputs[0]], target)` stored at `outputs[0]`. `free` are
/// the values dropped after the step.
struct Step {
  bool isCall = true;
  nb::object callable;
  nb::object target;
  std::vector<Py_ssize_t> inputs;
  std::vector<nb::object> extra;
  std::vector<Py_ssize_t> outputs;
  std::vector<Py_ssize_t> free;
};

std::vector<Py_ssize_t> indices(nb::handle sequence) {
  std::vector<Py_ssize_t> result;
  for (nb::handle item : sequence)
    result.push_back(nb::cast<Py_ssize_t>(item));
  return result;
}

/// The values of one run: owned references, released on every exit.
class Env {
public:
  explicit Env(size_t size) : values(size, nullptr) {}
  Env(const Env &) = delete;
  Env &operator=(const Env &) = delete;
  ~Env() {
    for (PyObject *value : values)
      Py_XDECREF(value);
  }
  PyObject *get(Py_ssize_t index) const { return values[index]; }
  /// Stores a new reference.
  void set(Py_ssize_t index, PyObject *value) {
    PyObject *old = values[index];
    values[index] = value;
    Py_XDECREF(old);
  }

private:
  std::vector<PyObject *> values;
};

class StepLoop {
public:
  StepLoop(nb::list steps, Py_ssize_t numValues, nb::list outputs)
      : numValues(numValues), outputs(indices(outputs)) {
    for (nb::handle entry : steps) {
      // (is_call, callable, inputs, extra, outputs, free, target)
      nb::tuple fields = nb::cast<nb::tuple>(entry);
      if (fields.size() != 7)
        throw nb::value_error("a step is (is_call, callable, inputs, extra, "
                              "outputs, free, target)");
      Step step;
      step.isCall = nb::cast<bool>(fields[0]);
      step.callable = nb::borrow(fields[1]);
      step.inputs = indices(fields[2]);
      for (nb::handle constant : fields[3])
        step.extra.push_back(nb::borrow(constant));
      step.outputs = indices(fields[4]);
      step.free = indices(fields[5]);
      step.target = nb::borrow(fields[6]);
      if (!step.isCall && (step.inputs.size() != 1 || step.outputs.size() != 1))
        throw nb::value_error("a transfer step has one input and one output");
      for (const std::vector<Py_ssize_t> *list :
           {&step.inputs, &step.outputs, &step.free})
        for (Py_ssize_t index : *list)
          if (index < 0 || index >= numValues)
            throw nb::value_error("a step names a value outside the plan");
      this->steps.push_back(std::move(step));
    }
    for (Py_ssize_t index : this->outputs)
      if (index < 0 || index >= numValues)
        throw nb::value_error("an output names a value outside the plan");
  }

  /// Runs every step on `inputs` (values 0..n-1); returns the outputs.
  /// When a step raises, `failed_step` and `failed_arguments` say which
  /// step and with what, and the exception propagates.
  nb::list run(nb::sequence inputs) {
    failedStep = -1;
    failedArguments = nb::none();
    Env env(numValues);
    Py_ssize_t count = 0;
    for (nb::handle input : inputs) {
      if (count >= numValues)
        throw nb::value_error("more inputs than the plan has values");
      env.set(count++, nb::borrow(input).release().ptr());
    }
    std::vector<PyObject *> arguments;
    for (size_t index = 0; index < steps.size(); ++index) {
      const Step &step = steps[index];
      arguments.clear();
      for (Py_ssize_t value : step.inputs) {
        PyObject *argument = env.get(value);
        if (!argument) {
          failedStep = static_cast<Py_ssize_t>(index);
          throw nb::value_error("a step reads a value no step has made");
        }
        arguments.push_back(argument);
      }
      PyObject *result;
      if (step.isCall) {
        for (const nb::object &constant : step.extra)
          arguments.push_back(constant.ptr());
        result = PyObject_Vectorcall(step.callable.ptr(), arguments.data(),
                                     arguments.size(), nullptr);
      } else {
        arguments.push_back(step.target.ptr());
        result = PyObject_Vectorcall(step.callable.ptr(), arguments.data(), 2,
                                     nullptr);
      }
      if (!result) {
        fail(index, arguments);
        throw nb::python_error();
      }
      if (!step.isCall) {
        env.set(step.outputs[0], result);
      } else {
        nb::object results = nb::steal(result);
        PyObject *fast = PySequence_Fast(results.ptr(), "results");
        if (!fast) {
          fail(index, arguments);
          throw nb::python_error();
        }
        nb::object owner = nb::steal(fast);
        if (PySequence_Fast_GET_SIZE(fast) !=
            static_cast<Py_ssize_t>(step.outputs.size())) {
          fail(index, arguments);
          throw nb::value_error("a program returned a different number of "
                                "results than the plan says");
        }
        PyObject **items = PySequence_Fast_ITEMS(fast);
        for (size_t i = 0; i < step.outputs.size(); ++i) {
          Py_INCREF(items[i]);
          env.set(step.outputs[i], items[i]);
        }
      }
      for (Py_ssize_t value : step.free)
        env.set(value, nullptr);
    }
    nb::list results;
    for (Py_ssize_t value : outputs) {
      PyObject *output = env.get(value);
      if (!output)
        throw nb::value_error("an output of the plan was never made");
      results.append(nb::borrow(output));
    }
    return results;
  }

  Py_ssize_t failedStep = -1;
  nb::object failedArguments = nb::none();

private:
  void fail(size_t index, const std::vector<PyObject *> &arguments) {
    // Keep the pending exception while building the list.
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    failedStep = static_cast<Py_ssize_t>(index);
    nb::list held;
    for (PyObject *argument : arguments)
      held.append(nb::borrow(argument));
    failedArguments = held;
    PyErr_Restore(type, value, traceback);
  }

  std::vector<Step> steps;
  Py_ssize_t numValues;
  std::vector<Py_ssize_t> outputs;
};

} // namespace

void registerStepLoop(nb::module_ &module) {
  nb::class_<StepLoop>(
      module, "StepLoop",
      "The executor's per-step loop: runs a flattened execution plan, "
      "calling each step's callable with vectorcall and dropping values at "
      "their last use.")
      .def(nb::init<nb::list, Py_ssize_t, nb::list>(), nb::arg("steps"),
           nb::arg("num_values"), nb::arg("outputs"),
           "`steps`: (is_call, callable, input values, constants, output "
           "values, values to free, transfer target) per step; a transfer "
           "calls callable(value, target).")
      .def("run", &StepLoop::run, nb::arg("inputs"),
           "Runs the steps on the inputs (values 0..n-1); returns the "
           "outputs as a list.")
      .def_ro("failed_step", &StepLoop::failedStep,
              "The step whose call raised in the last run, or -1.")
      .def_ro("failed_arguments", &StepLoop::failedArguments,
              "The arguments of that step (inputs, then constants or the "
              "target).");
}

} // namespace mpmd::python
