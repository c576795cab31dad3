"""Notifiers: where events go. One module per notifier type, registered as entry points in the
``release_watch.notifiers`` group and loaded only when a configuration names them."""
