package controller

// EventComponent is the source component of the events the controller records,
// upstream's.
const EventComponent = "statefulset-controller"
