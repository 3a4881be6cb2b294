"""Readers of published click logs in their own raw formats, into a :class:`~boostplug.clicks.ClickLog`:

* :mod:`~boostplug.clicks.formats.baidu_ultr`: Baidu-ULTR's gzipped TSV parts
  (:class:`BaiduULTR`, :func:`read_baidu_ultr`);
* :mod:`~boostplug.clicks.formats.yandex`: the Yandex Relevance Prediction Challenge log
  (:class:`YandexRelPred`, :func:`read_yandex`).

A source object (:class:`BaiduULTR`, :class:`YandexRelPred`) goes wherever a click-log file does:
:func:`boostplug.clicks.read_log` reads it whole, :func:`boostplug.clicks.preferences` streams
it in batches of whole sessions. Each ``read_*`` function is ``read_log`` of its source.
"""

from __future__ import annotations

from .baidu_ultr import BaiduULTR, read_baidu_ultr
from .yandex import YandexRelPred, read_yandex

__all__ = ["BaiduULTR", "YandexRelPred", "read_baidu_ultr", "read_yandex"]
