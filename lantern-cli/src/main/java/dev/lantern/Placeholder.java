package dev.lantern;
final class Placeholder {}
