// Loaded before every test file: tsyringe needs the Reflect metadata API before any decorator runs.
import 'reflect-metadata';
